#include "output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace hoop::perf {
namespace {

// A fresh directory per test, removed with what is left in it.
class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/hoop_perf_output_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    const std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  static bool exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_;
};

TEST_F(OutputFileTest, WritesWholeFileAndNoTemporary) {
  const std::string path = dir_ + "/out.json";
  EXPECT_EQ(writeFileAtomically(path, "{}\n"), "");
  EXPECT_EQ(read(path), "{}\n");
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST_F(OutputFileTest, ReplacesAnOldFile) {
  const std::string path = dir_ + "/out.csv";
  std::ofstream(path) << "old, longer than the new text\n";
  EXPECT_EQ(writeFileAtomically(path, "new\n"), "");
  EXPECT_EQ(read(path), "new\n");
}

TEST_F(OutputFileTest, FailureLeavesNothing) {
  const std::string path = dir_ + "/missing/out.svg";
  const std::string error = writeFileAtomically(path, "<svg/>");
  EXPECT_NE(error.find("cannot create " + path + ".tmp"), std::string::npos) << error;
  EXPECT_FALSE(exists(path));
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST_F(OutputFileTest, FailedRenameRemovesTheTemporary) {
  // A non-empty directory where the file should go: the rename fails after the write.
  const std::string path = dir_ + "/taken";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  std::ofstream(path + "/keep") << "x";
  const std::string error = writeFileAtomically(path, "text");
  EXPECT_NE(error.find("cannot rename"), std::string::npos) << error;
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST_F(OutputFileTest, CheckOutputPath) {
  EXPECT_EQ(checkOutputPath(dir_ + "/new.json"), "");
  EXPECT_EQ(checkOutputPath(dir_), dir_ + " is a directory");
  EXPECT_NE(checkOutputPath(dir_ + "/missing/new.json").find("directory " + dir_ + "/missing"),
            std::string::npos);
  EXPECT_NE(checkOutputPath("").find("empty"), std::string::npos);
  const std::string file = dir_ + "/plain";
  std::ofstream(file) << "x";
  EXPECT_NE(checkOutputPath(file + "/below.json").find("is not a directory"), std::string::npos);
  // A bare name is relative to the working directory, which exists.
  EXPECT_EQ(checkOutputPath("hoop_perf_check_only.json"), "");
}

}  // namespace
}  // namespace hoop::perf
