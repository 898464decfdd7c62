// hoop declares the little of PMIx's ABI it uses itself (core/pmix_abi.h), so that it builds
// without PMIx; where pmix.h is installed, this holds the declarations to it.
#include "core/pmix_abi.h"

#include <gtest/gtest.h>
#include <pmix.h>

#include <cstddef>

namespace hoop {
namespace {

TEST(PmixAbi, ConstantsMatchPmixH) {
  EXPECT_EQ(pmix_abi::kNamespaceBytes, static_cast<size_t>(PMIX_MAX_NSLEN + 1));
  EXPECT_EQ(pmix_abi::kMaxKeyLength, static_cast<size_t>(PMIX_MAX_KEYLEN));
  EXPECT_EQ(pmix_abi::kSuccess, PMIX_SUCCESS);
  EXPECT_EQ(pmix_abi::kStringType, PMIX_STRING);
  EXPECT_EQ(pmix_abi::kGlobalScope, PMIX_GLOBAL);
}

TEST(PmixAbi, LayoutsMatchPmixH) {
  EXPECT_EQ(sizeof(pmix_abi::Proc), sizeof(pmix_proc_t));
  EXPECT_EQ(offsetof(pmix_abi::Proc, rank), offsetof(pmix_proc_t, rank));
  EXPECT_EQ(sizeof(pmix_abi::Proc::rank), sizeof(pmix_rank_t));
  EXPECT_EQ(sizeof(pmix_abi::Value), sizeof(pmix_value_t));
  EXPECT_EQ(sizeof(pmix_abi::Value::type), sizeof(pmix_data_type_t));
  EXPECT_EQ(offsetof(pmix_abi::Value, data), offsetof(pmix_value_t, data));
  EXPECT_EQ(offsetof(pmix_abi::Value, data.string), offsetof(pmix_value_t, data.string));
}

}  // namespace
}  // namespace hoop
