//===- FileIOTest.cpp - Bounded reads and safe writes ---------------------===//
#include "tessel/Support/FileIO.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessel;

namespace {

/// A fresh directory under the build's temporary directory.
class FileIO : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tessel-fileio-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  std::string path(const std::string &name) const { return dir + "/" + name; }
  static std::string contents(const std::string &file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    DIR *d = ::opendir(dir.c_str());
    while (dirent *e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        names.push_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir;
};

TEST_F(FileIO, WritesAndKeepsTheMode) {
  ASSERT_TRUE(writeFile(path("a"), "one"));
  EXPECT_EQ(contents(path("a")), "one");
  ASSERT_EQ(::chmod(path("a").c_str(), 0640), 0);
  ASSERT_TRUE(writeFile(path("a"), "two"));
  EXPECT_EQ(contents(path("a")), "two");
  struct stat info;
  ASSERT_EQ(::stat(path("a").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(), std::vector<std::string>{"a"});
}

TEST_F(FileIO, FollowsSymbolicLinks) {
  ASSERT_TRUE(writeFile(path("target"), "old"));
  ASSERT_EQ(::symlink("target", path("link").c_str()), 0);
  ASSERT_TRUE(writeFile(path("link"), "new"));
  struct stat info;
  ASSERT_EQ(::lstat(path("link").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(contents(path("target")), "new");
}

TEST_F(FileIO, WritesDevicesInPlace) {
  ASSERT_TRUE(writeFile("/dev/null", "discarded"));
  struct stat info;
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  Status full = writeFile("/dev/full", "x");
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().message,
            "cannot write /dev/full: no space left on device");
}

TEST_F(FileIO, RefusesDirectoriesAndEmptyNames) {
  Status error = writeFile(dir, "x");
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message,
            "cannot write " + dir + ": it is a directory");
  error = writeFile("", "x");
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message, "cannot write a file with an empty name");
}

TEST_F(FileIO, SeveralFilesAllOrNone) {
  ASSERT_TRUE(writeFile(path("a"), "old"));
  Status error = writeFiles({{path("a"), "new"}, {path("missing/b"), "new"}});
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message, "cannot write " + path("missing/b") +
                                       ": no such file or directory");
  EXPECT_EQ(contents(path("a")), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"a"});
  ASSERT_TRUE(writeFiles({{path("a"), "new"}, {path("b"), "bee"}}));
  EXPECT_EQ(contents(path("a")), "new");
  EXPECT_EQ(contents(path("b")), "bee");
}

TEST_F(FileIO, ReadsAreBounded) {
  ASSERT_TRUE(writeFile(path("ten"), "0123456789"));
  Expected<std::string> all = readFileBytes(path("ten"), 10);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(*all, "0123456789");
  Expected<std::string> big = readFileBytes(path("ten"), 9, "nine at most");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, path("ten") + " has 10 bytes, nine at most");
  Expected<std::string> zero = readFileBytes("/dev/zero", 100);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message,
            "/dev/zero holds more than 100 bytes, the most tessel reads");
  Expected<std::string> directory = readFileBytes(dir);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message,
            "cannot read " + dir + ": it is a directory");
}

TEST_F(FileIO, HardLinksStayLinked) {
  ASSERT_TRUE(writeFile(path("a"), "old"));
  ASSERT_EQ(::link(path("a").c_str(), path("b").c_str()), 0);
  ASSERT_TRUE(writeFile(path("a"), "new contents"));
  EXPECT_EQ(contents(path("b")), "new contents");
  struct stat a, b;
  ASSERT_EQ(::stat(path("a").c_str(), &a), 0);
  ASSERT_EQ(::stat(path("b").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_nlink, 2u);
  // No temporary file is left beside them.
  EXPECT_EQ(entries(), std::vector<std::string>({"a", "b"}));
}

} // namespace
