// io::overlap: two paths are one file by device and inode after following links, or, for paths
// that do not exist yet, by their canonical spelling; a path inside a directory is found too.
#include "shiftop/io/file_identity.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using shiftop::testing::contains;
using shiftop::testing::error_of;
using shiftop::testing::write_text;
namespace fs = std::filesystem;

class FileIdentityTest : public shiftop::testing::TempDirTest {};

TEST_F(FileIdentityTest, OneExistingFileUnderEverySpelling) {
  write_text(path("a.h5"), "a");
  fs::create_directory(path("sub"));
  fs::create_symlink("a.h5", path("link.h5"));
  fs::create_symlink("../link.h5", path("sub/chain.h5"));  // a link to a link, relative
  fs::create_hard_link(path("a.h5"), path("hard.h5"));
  for (const std::string& other : {path("a.h5"), path("sub/../a.h5"), path("./a.h5"),
                                   path("link.h5"), path("sub/chain.h5"), path("hard.h5")})
    EXPECT_EQ(overlap(path("a.h5"), other), Overlap::Same) << other;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  EXPECT_EQ(overlap("a.h5", path("a.h5")), Overlap::Same);
  EXPECT_EQ(overlap("./sub/chain.h5", "hard.h5"), Overlap::Same);
  fs::current_path(cwd);
}

TEST_F(FileIdentityTest, DifferentFilesAreNotOne) {
  write_text(path("a.h5"), "same bytes");
  write_text(path("b.h5"), "same bytes");  // equal content, other inode
  EXPECT_EQ(overlap(path("a.h5"), path("b.h5")), Overlap::None);
  EXPECT_EQ(overlap(path("a.h5"), path("new.h5")), Overlap::None);
  EXPECT_EQ(overlap(path("new.h5"), path("a.h5")), Overlap::None);
  EXPECT_EQ(overlap(path("new.h5"), path("other.h5")), Overlap::None);
  // A name that merely begins like a directory's is not inside it.
  fs::create_directory(path("dir"));
  EXPECT_EQ(overlap(path("dirx/y.h5"), path("dir")), Overlap::None);
}

TEST_F(FileIdentityTest, NewPathsCompareByCanonicalSpelling) {
  fs::create_directory(path("sub"));
  fs::create_directory_symlink("sub", path("alias"));
  EXPECT_EQ(overlap(path("x.h5"), path("sub/../x.h5")), Overlap::Same);
  EXPECT_EQ(overlap(path("sub/x.h5"), path("alias/x.h5")), Overlap::Same);
  fs::create_symlink("sub/target.h5", path("dangling.h5"));  // its target does not exist yet
  EXPECT_EQ(overlap(path("dangling.h5"), path("alias/target.h5")), Overlap::Same);
  EXPECT_EQ(overlap(path("sub/x.h5"), path("sub/y.h5")), Overlap::None);
}

TEST_F(FileIdentityTest, InsideAndContainingADirectory) {
  fs::create_directories(path("F/binary"));
  write_text(path("F/binary/meta_adj"), "8 lines");
  fs::create_directory_symlink("F", path("G"));
  EXPECT_EQ(overlap(path("F/binary/meta_adj"), path("F")), Overlap::Inside);
  EXPECT_EQ(overlap(path("G/binary/meta_adj"), path("F")), Overlap::Inside);
  EXPECT_EQ(overlap(path("F/binary/new.h5"), path("G")), Overlap::Inside);
  EXPECT_EQ(overlap(path("F"), path("G/binary/meta_adj")), Overlap::Contains);
  EXPECT_EQ(overlap(path("F/"), path("G")), Overlap::Same);
  EXPECT_EQ(overlap(path("F/binary"), path("F/binary/meta_adj")), Overlap::Contains);
}

TEST_F(FileIdentityTest, TrailingSlashesNameThePathBeforeThem) {
  // "m.npy/" cannot be stat'ed: it once compared as another file than m.npy.
  write_text(path("m.npy"), "m");
  fs::create_directory(path("F"));
  EXPECT_EQ(overlap(path("m.npy/"), path("m.npy")), Overlap::Same);
  EXPECT_EQ(overlap(path("m.npy"), path("m.npy//")), Overlap::Same);
  EXPECT_EQ(overlap(path("F/"), path("F//")), Overlap::Same);
  EXPECT_EQ(overlap(path("new/"), path("new")), Overlap::Same);
  EXPECT_EQ(overlap(path("F/x.h5"), path("F/")), Overlap::Inside);
  EXPECT_EQ(without_trailing_slashes("out//"), "out");
  EXPECT_EQ(without_trailing_slashes("/"), "/");
}

TEST_F(FileIdentityTest, PathOverlapJudgesByIdentityAndSpellingWhateverExists) {
  fs::create_directory(path("sub"));
  fs::create_directory_symlink("sub", path("alias"));
  // G does not exist: overlap() cannot see inside it, path_overlap() can.
  EXPECT_EQ(overlap(path("G/binary/x.h5"), path("G")), Overlap::None);
  EXPECT_EQ(path_overlap(path("G/binary/x.h5"), path("G")), Overlap::Inside);
  EXPECT_EQ(path_overlap(path("G/"), path("./G/sub/../t.h5")), Overlap::Contains);
  EXPECT_EQ(path_overlap(path("alias/G/t.h5"), path("sub/G")), Overlap::Inside);
  EXPECT_EQ(path_overlap(path("sub/G"), path("alias/G/")), Overlap::Same);
  EXPECT_EQ(path_overlap(path("Gx/t.h5"), path("G")), Overlap::None);
  EXPECT_EQ(path_overlap(path("G"), path("Gx")), Overlap::None);
  // Existing: by identity, as overlap().
  write_text(path("sub/a.h5"), "a");
  EXPECT_EQ(path_overlap(path("alias/a.h5"), path("sub")), Overlap::Inside);
  EXPECT_EQ(path_overlap(path("alias/a.h5"), path("sub/a.h5")), Overlap::Same);
  EXPECT_FALSE(fs::exists(path("G")) || fs::exists(path("sub/G"))) << "none created";
}

TEST_F(FileIdentityTest, ResolvesLinksOfTheLastComponentOnly) {
  fs::create_directory(path("sub"));
  fs::create_symlink("sub/t.h5", path("l1"));
  fs::create_symlink("l1", path("l2"));
  EXPECT_EQ(resolve_links(path("l2")), fs::path(path("sub/t.h5")));
  EXPECT_EQ(resolve_links(path("plain.h5")), fs::path(path("plain.h5")));
  fs::create_symlink("loop_b", path("loop_a"));
  fs::create_symlink("loop_a", path("loop_b"));
  EXPECT_TRUE(contains(error_of([&] { resolve_links(path("loop_a")); }),
                       "too many levels of symbolic links"));
}

}  // namespace
}  // namespace shiftop::io
