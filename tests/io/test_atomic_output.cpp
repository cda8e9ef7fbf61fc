// io::AtomicOutput: a symbolic link at the target is kept and its target replaced; FIFOs, devices
// and "-" are written directly by a Stream and refused by formats that seek; the checks made
// before any work (check_output_path); and the temporaries a signal's clean-up removes.
#include "shiftop/io/atomic_output.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "io/fftmatvec_format.hpp"
#include "io/fftmatvec_meta.hpp"
#include "io/temporaries.hpp"
#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

using shiftop::testing::contains;
using shiftop::testing::error_of;
using shiftop::testing::write_text;
namespace fs = std::filesystem;
using Kind = AtomicOutput::Kind;

class AtomicOutputTest : public shiftop::testing::TempDirTest {};

// A directory replaceable when it holds nothing but "binary/" (a stand-in for a writer's check).
void only_binary(const std::string& dir) {
  for (const auto& child : fs::directory_iterator(dir))
    require(child.path().filename() == "binary", "{}: holds '{}'", dir,
            child.path().filename().string());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_through(AtomicOutput& out, std::string_view text) {
  std::FILE* file = out.open_stream();
  ASSERT_NE(file, nullptr);
  std::fwrite(text.data(), 1, text.size(), file);
  std::fclose(file);
  out.commit();
}

TEST_F(AtomicOutputTest, ASymbolicLinkIsKeptAndItsTargetReplaced) {
  fs::create_directory(path("data"));
  write_text(path("data/y.npy"), "old");
  fs::create_symlink("data/y.npy", path("y.npy"));
  AtomicOutput out(path("y.npy"), Kind::Stream);
  EXPECT_EQ(fs::path(out.path()).parent_path(), fs::path(path("data")));  // beside the target
  write_through(out, "new");
  EXPECT_TRUE(fs::is_symlink(path("y.npy")));
  EXPECT_EQ(fs::read_symlink(path("y.npy")), fs::path("data/y.npy"));
  EXPECT_EQ(read_text(path("data/y.npy")), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(path("data")), {}), 1);  // no temporary left
}

TEST_F(AtomicOutputTest, ADanglingLinkGetsItsTargetCreated) {
  fs::create_symlink("made.txt", path("link.txt"));
  AtomicOutput out(path("link.txt"), Kind::Stream);
  write_through(out, "text");
  EXPECT_TRUE(fs::is_symlink(path("link.txt")));
  EXPECT_EQ(read_text(path("made.txt")), "text");
}

TEST_F(AtomicOutputTest, AStreamWritesAFifoDirectly) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_text(path("pipe")); });
  {
    AtomicOutput out(path("pipe"), Kind::Stream);
    EXPECT_EQ(out.path(), path("pipe"));
    write_through(out, "through the pipe");
  }
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(path("pipe")));  // not replaced by a regular file
  EXPECT_EQ(entries(), std::vector<std::string>{"pipe"});
}

TEST_F(AtomicOutputTest, AStreamWritesADeviceDirectly) {
  AtomicOutput out("/dev/null", Kind::Stream);
  EXPECT_EQ(out.path(), "/dev/null");
  write_through(out, "gone");
  struct stat status {};
  ASSERT_EQ(::stat("/dev/null", &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode));
}

TEST_F(AtomicOutputTest, FormatsThatSeekRefuseSpecialFilesAndStandardOutput) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  for (const Kind kind : {Kind::File, Kind::Directory}) {
    EXPECT_TRUE(contains(error_of([&] { AtomicOutput(path("pipe"), kind, only_binary); }),
                         "pipe: is a FIFO: expected a regular file or a new path"));
    EXPECT_TRUE(contains(error_of([&] { AtomicOutput("/dev/null", kind, only_binary); }),
                         "/dev/null: is a character device"));
    EXPECT_TRUE(contains(error_of([&] { check_output_path("-", kind); }),
                         "'-' (standard output): this format needs a regular file"));
  }
  EXPECT_TRUE(fs::is_fifo(path("pipe")));
  EXPECT_EQ(error_of([&] { check_output_path("-", Kind::Stream); }), "no error");
}

TEST_F(AtomicOutputTest, ChecksTheDirectoryAndTheTargetBeforeAnyWork) {
  write_text(path("file"), "x");
  fs::create_directories(path("dir/binary"));
  fs::create_directories(path("other/stuff"));
  const auto message = [&](const std::string& target, Kind kind) {
    return error_of([&] { check_output_path(target, kind, only_binary); });
  };
  EXPECT_TRUE(contains(message(path("none/y.h5"), Kind::File),
                       fmt::format("directory '{}' does not exist", path("none"))));
  EXPECT_TRUE(contains(message(path("file/y.h5"), Kind::File),
                       fmt::format("'{}' is not a directory", path("file"))));
  EXPECT_TRUE(contains(message(path("dir"), Kind::File), "is a directory: expected a file name"));
  EXPECT_TRUE(contains(message(path("dir"), Kind::Stream), "is a directory"));
  EXPECT_TRUE(contains(message(path("other"), Kind::Directory), "holds 'stuff'"));
  EXPECT_TRUE(contains(message(path("file"), Kind::Directory), "already exists and is not a dir"));
  EXPECT_EQ(message(path("dir"), Kind::Directory), "no error");
  EXPECT_EQ(message(path("file"), Kind::File), "no error");
  EXPECT_EQ(message(path("new.h5"), Kind::File), "no error");
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directory(path("locked"));
    fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_TRUE(contains(message(path("locked/y.h5"), Kind::File), "cannot write in directory"));
  }
  EXPECT_EQ(entries(),
            (std::vector<std::string>{"dir", "dir/binary", "file", "other", "other/stuff"}))
      << "nothing created";
}

TEST_F(AtomicOutputTest, AFileNameEndingInASlashIsRefused) {
  // "y.npy/" once passed, and was then written as "y.npy": whatever was there, replaced.
  write_text(path("y.npy"), "input");
  fs::create_directory(path("dir"));
  for (const Kind kind : {Kind::File, Kind::Stream})
    for (const std::string& name :
         {path("y.npy/"), path("new.npy/"), path("dir/"), std::string("/dev/null/")}) {
      EXPECT_TRUE(contains(error_of([&] { check_output_path(name, kind); }),
                           name + ": ends in '/', which names a directory: expected a file name"))
          << name;
      EXPECT_TRUE(contains(error_of([&] { AtomicOutput(name, kind); }), "ends in '/'")) << name;
    }
  EXPECT_EQ(read_text(path("y.npy")), "input");
  EXPECT_EQ(entries(), (std::vector<std::string>{"dir", "y.npy"}));
  // A directory may be named "F/": it is F.
  AtomicOutput out(path("F/"), Kind::Directory, only_binary);
  fs::create_directory(fs::path(out.path()) / "binary");
  out.commit();
  EXPECT_EQ(entries(), (std::vector<std::string>{"F", "F/binary", "dir", "y.npy"}));
}

TEST_F(AtomicOutputTest, ADirectoryIsReplacedOnlyWhereItsWriterAcceptsIt) {
  fs::create_directories(path("X/binary/src"));
  write_text(path("X/binary/src/thesis.tex"), "x");
  fs::create_directory(path("empty"));
  const auto refuse_all = [](const std::string& dir) { fail("{}: not mine", dir); };
  EXPECT_TRUE(contains(error_of([&] { AtomicOutput(path("X"), Kind::Directory, refuse_all); }),
                       "X: not mine"));
  EXPECT_TRUE(contains(error_of([&] { AtomicOutput(path("empty"), Kind::Directory); }),
                       "is an existing directory: expected a new path"));
  // Accepted when checked before the work, refused at the commit: the directory is kept.
  bool accept = true;
  {
    AtomicOutput out(path("X"), Kind::Directory,
                     [&](const std::string& dir) { require(accept, "{}: changed since", dir); });
    accept = false;
    EXPECT_TRUE(contains(error_of([&] { out.commit(); }), "changed since"));
  }
  EXPECT_EQ(read_text(path("X/binary/src/thesis.tex")), "x");
  EXPECT_EQ(entries(), (std::vector<std::string>{"X", "X/binary", "X/binary/src",
                                                 "X/binary/src/thesis.tex", "empty"}));
}

TEST_F(AtomicOutputTest, AnFFTMatvecDirectoryIsReplaceableOnlyAsShiftopWritesIt) {
  const MetaAdj meta{.nd = 2, .nm = 1, .nt = 1, .prefix = "adj/vec_", .extension = ".h5"};
  const auto make = [&](const std::string& name) {
    fs::create_directories(path(name + "/binary/adj"));
    write_text(path(name + "/binary/meta_adj"), format_meta_adj(meta));
    for (index_t row = 0; row < meta.nd; ++row)
      write_text(path(name + "/" + block_row_path(meta, row)), "row");
    return path(name);
  };
  const auto message = [](const std::string& dir) {
    return error_of([&] { fftmatvec::check_replaceable(dir); });
  };
  EXPECT_EQ(message(make("F")), "no error");
  fs::remove(path("F/binary/adj/vec_000001.h5"));  // fewer rows than Nd: still shiftop's
  EXPECT_EQ(message(path("F")), "no error");
  write_text(path("F/binary/adj/vec_000002.h5"), "row");  // Nd = 2: no row 2
  EXPECT_TRUE(contains(message(path("F")), "holds 'binary/adj/vec_000002.h5'"));
  make("G");
  fs::create_directories(path("G/binary/src"));
  write_text(path("G/binary/src/thesis.tex"), "x");
  EXPECT_TRUE(contains(message(path("G")), "holds 'binary/src"));
  make("H");
  write_text(path("H/README"), "x");
  EXPECT_TRUE(contains(message(path("H")), "holds 'README'"));
  make("L");
  fs::remove(path("L/binary/adj/vec_000001.h5"));
  fs::create_symlink("vec_000000.h5", path("L/binary/adj/vec_000001.h5"));
  EXPECT_TRUE(contains(message(path("L")), "holds 'binary/adj/vec_000001.h5'"));
  make("M");
  write_text(path("M/binary/meta_adj"), "not meta_adj\n");
  EXPECT_TRUE(contains(message(path("M")), "binary/meta_adj is missing or not one shiftop"));
  fs::create_directories(path("X/binary/src"));
  EXPECT_TRUE(contains(message(path("X")), "no file binary/meta_adj"));
  const std::string error = message(path("G"));
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 0) << "one line";
}

TEST_F(AtomicOutputTest, CleanUpForExitRemovesEveryUncommittedTemporary) {
  write_text(path("y.h5"), "previous");
  EXPECT_EXIT(
      {
        AtomicOutput file(path("y.h5"), Kind::File);
        write_text(file.path(), "half written");
        AtomicOutput directory(path("F"), Kind::Directory, only_binary);
        fs::create_directories(fs::path(directory.path()) / "binary");
        write_text((fs::path(directory.path()) / "binary" / "meta_adj").string(), "x");
        AtomicOutput done(path("done.txt"), Kind::Stream);
        write_through(done, "committed");
        remove_temporaries_for_exit();
        std::_Exit(3);  // as the signal would: no destructors
      },
      ::testing::ExitedWithCode(3), "");
  EXPECT_EQ(entries(), (std::vector<std::string>{"done.txt", "y.h5"}));
  EXPECT_EQ(read_text(path("y.h5")), "previous");
  EXPECT_EQ(read_text(path("done.txt")), "committed");
}

}  // namespace
}  // namespace shiftop::io
