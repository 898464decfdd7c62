// The project's one table of type, operation and operation-kind names (base/types.h): every
// spelling reads back as its own entry, the printed names stay what logs and tables have always
// shown, and anything else is refused.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/types.h"

namespace hoop {
namespace {

std::vector<std::string_view> spellings(const DataTypeInfo& info) {
  std::vector<std::string_view> all{info.name, info.sizedName};
  for (std::string_view alias : info.aliases) {
    if (!alias.empty()) all.push_back(alias);
  }
  return all;
}

TEST(DataTypeNames, EverySpellingRoundTrips) {
  for (const DataTypeInfo& info : kDataTypes) {
    for (std::string_view spelling : spellings(info)) {
      EXPECT_EQ(parseDataType(spelling), info.type) << spelling;
    }
    EXPECT_EQ(dataTypeName(info.type), info.name);
  }
}

// A spelling naming two types would make one of them unreachable.
TEST(DataTypeNames, NoSpellingNamesTwoTypes) {
  std::set<std::string_view> seen;
  for (const DataTypeInfo& info : kDataTypes) {
    std::set<std::string_view> own;
    for (std::string_view spelling : spellings(info)) own.insert(spelling);
    for (std::string_view spelling : own) EXPECT_TRUE(seen.insert(spelling).second) << spelling;
  }
}

// What logs, errors and hoop-perf's "type" column print (nccl-tests' names), what the Python
// module's hoop.dtype attributes are called, and what each spelling the C API and command lines
// use means.
TEST(DataTypeNames, PrintedNamesAndKnownSpellings) {
  const std::vector<std::string_view> printed{"int8",   "uint8", "int32", "uint32", "int64",
                                              "uint64", "half",  "float", "double", "bfloat16"};
  const std::vector<std::string_view> sized{"int8",   "uint8",   "int32",   "uint32",  "int64",
                                            "uint64", "float16", "float32", "float64", "bfloat16"};
  const std::vector<size_t> sizes{1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  ASSERT_EQ(kDataTypes.size(), printed.size());
  for (size_t i = 0; i < kDataTypes.size(); ++i) {
    const auto type = static_cast<DataType>(i);
    EXPECT_EQ(kDataTypes[i].type, type);
    EXPECT_EQ(dataTypeName(type), printed[i]);
    EXPECT_EQ(kDataTypes[i].sizedName, sized[i]);
    EXPECT_EQ(dataTypeSize(type), sizes[i]) << printed[i];
  }
  EXPECT_EQ(parseDataType("char"), DataType::kInt8);
  EXPECT_EQ(parseDataType("fp16"), DataType::kFloat16);
  EXPECT_EQ(parseDataType("f16"), DataType::kFloat16);
  EXPECT_EQ(parseDataType("fp32"), DataType::kFloat32);
  EXPECT_EQ(parseDataType("f32"), DataType::kFloat32);
  EXPECT_EQ(parseDataType("fp64"), DataType::kFloat64);
  EXPECT_EQ(parseDataType("f64"), DataType::kFloat64);
  EXPECT_EQ(parseDataType("bf16"), DataType::kBfloat16);
}

TEST(DataTypeNames, UnknownNamesAreRefused) {
  for (std::string_view name :
       {"", "fp8", "int16", "Float", "FLOAT32", "float ", " half", "bool", "int", "all", "?"}) {
    EXPECT_FALSE(parseDataType(name).has_value()) << "'" << name << "'";
  }
}

TEST(DataTypeNames, OutOfRangeValues) {
  EXPECT_TRUE(isDataType(0));
  EXPECT_TRUE(isDataType(kNumDataTypes - 1));
  EXPECT_FALSE(isDataType(-1));
  EXPECT_FALSE(isDataType(kNumDataTypes));
  EXPECT_EQ(dataTypeName(static_cast<DataType>(kNumDataTypes)), "?");
  EXPECT_EQ(dataTypeSize(static_cast<DataType>(kNumDataTypes)), 0u);
}

TEST(RedOpNames, EveryNameRoundTripsAndOthersAreRefused) {
  const std::vector<std::string_view> printed{"sum", "prod", "max", "min", "avg"};
  ASSERT_EQ(kRedOps.size(), printed.size());
  for (size_t i = 0; i < kRedOps.size(); ++i) {
    const auto op = static_cast<RedOp>(i);
    EXPECT_EQ(kRedOps[i].op, op);
    EXPECT_EQ(redOpName(op), printed[i]);
    EXPECT_EQ(parseRedOp(printed[i]), op);
  }
  for (std::string_view name : {"", "none", "Sum", "average", "mean", "product", "all"}) {
    EXPECT_FALSE(parseRedOp(name).has_value()) << "'" << name << "'";
  }
  EXPECT_TRUE(isRedOp(kNumRedOps - 1));
  EXPECT_FALSE(isRedOp(kNumRedOps));
  EXPECT_FALSE(isRedOp(-1));
  EXPECT_EQ(redOpName(static_cast<RedOp>(kNumRedOps)), "?");
}

TEST(OpKindNames, NameAndWordRoundTrip) {
  for (const OpKindInfo& info : kOpKinds) {
    EXPECT_EQ(opKindName(info.kind), info.name);
    EXPECT_EQ(opKindWord(info.kind), info.word);
    EXPECT_EQ(parseOpKind(info.name), info.kind) << info.name;
    EXPECT_EQ(parseOpKind(info.word), info.kind) << info.word;
    EXPECT_EQ(info.word.find_first_of(" /"), std::string_view::npos) << info.word;
    EXPECT_EQ(info.name.data()[info.name.size()], '\0');  // usable as a C string
    EXPECT_EQ(info.word.data()[info.word.size()], '\0');
  }
}

// What error messages print about a mismatched frame, and what hoop-perf's command line takes.
TEST(OpKindNames, PrintedNamesAndWords) {
  EXPECT_EQ(opKindName(OpKind::kSendRecv), "send/recv");
  EXPECT_EQ(opKindWord(OpKind::kSendRecv), "sendrecv");
  EXPECT_EQ(opKindName(OpKind::kSetup), "connection setup");
  EXPECT_EQ(opKindName(OpKind::kSetAlgorithms), "set algorithms");
  EXPECT_EQ(opKindName(OpKind::kReduceScatter), "reducescatter");
  EXPECT_EQ(opKindName(static_cast<OpKind>(0)), "unknown operation");
  EXPECT_EQ(opKindWord(static_cast<OpKind>(0)), "unknown");
}

TEST(OpKindNames, UnknownNamesAreRefused) {
  for (std::string_view name : {"", "all_reduce", "AllReduce", "alltoallv", "send", "gather",
                                "unknown", "unknown operation"}) {
    EXPECT_FALSE(parseOpKind(name).has_value()) << "'" << name << "'";
  }
}

}  // namespace
}  // namespace hoop
