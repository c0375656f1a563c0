//===- SessionPartsTest.cpp - What a session keeps and prints -------------===//
//
// The parts of a session that need no protocol: SentAssets, which refuses
// a second file under an asset name already taken and skips a file sent
// again unchanged; and SessionOptions::Profile's line, one per launch, on
// stderr.
//
//===----------------------------------------------------------------------===//

#include "EngineHarness.h"
#include "ExecutorProcess.h"
#include "Procfs.h"
#include "TempDir.h"
#include "catalyst/remote/Failure.h"
#include "session/SentAssets.h"

#include <fcntl.h>
#include <fstream>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;

namespace {

void write(const std::string &Path, const std::string &Bytes) {
  std::ofstream(Path) << Bytes;
}

TEST(SentAssetsTest, AFileIsSentAgainOnlyWhenItsBytesChanged) {
  TempDir Dir;
  std::string Path = Dir.path("w.bin");
  SentAssets Sent;
  SentAsset First = SentAsset::of(Path, "weights");
  auto Stored = Sent.isStored("w.bin", First);
  ASSERT_TRUE(bool(Stored)) << toString(Stored.takeError());
  EXPECT_FALSE(*Stored) << "nothing was stored yet";
  Sent.record("w.bin", First);
  Stored = Sent.isStored("w.bin", SentAsset::of(Path, "weights"));
  ASSERT_TRUE(bool(Stored)) << toString(Stored.takeError());
  EXPECT_TRUE(*Stored) << "the same bytes again";
  Stored = Sent.isStored("w.bin", SentAsset::of(Path, "weighty"));
  ASSERT_TRUE(bool(Stored)) << toString(Stored.takeError());
  EXPECT_FALSE(*Stored) << "changed bytes (of the same size) are sent again";
}

TEST(SentAssetsTest, ASymlinkIsTheFileItNames) {
  TempDir Dir;
  std::string Real = Dir.path("w.bin");
  write(Real, "weights");
  ASSERT_EQ(::mkdir(Dir.path("via").c_str(), 0700), 0);
  std::string Link = Dir.path("via/w.bin");
  ASSERT_EQ(::symlink(Real.c_str(), Link.c_str()), 0);
  SentAssets Sent;
  Sent.record("w.bin", SentAsset::of(Real, "weights"));
  auto Stored = Sent.isStored("w.bin", SentAsset::of(Link, "weights"));
  ASSERT_TRUE(bool(Stored)) << toString(Stored.takeError());
  EXPECT_TRUE(*Stored);
}

TEST(SentAssetsTest, AnotherFileUnderATakenNameIsRefusedNamingBoth) {
  TempDir Dir;
  ASSERT_EQ(::mkdir(Dir.path("a").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(Dir.path("b").c_str(), 0700), 0);
  std::string A = Dir.path("a/w.bin"), B = Dir.path("b/w.bin");
  write(A, "weights");
  write(B, "weights");
  SentAssets Sent;
  Sent.record("w.bin", SentAsset::of(A, "weights"));
  FailureReport R = failureOf(Sent.isStored("w.bin", SentAsset::of(B, "weights")).takeError());
  EXPECT_EQ(R.Kind, FailureKind::BadArgument);
  EXPECT_NE(R.Message.find("'" + B + "' has the same file name as '" + A + "'"), std::string::npos)
      << R.Message;
}

// Runs F with this process's stderr going to a file; returns what was
// written there.
template <typename Fn> std::string stderrOf(Fn F) {
  TempDir Dir;
  std::string Path = Dir.path("stderr");
  int File = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int Saved = ::dup(2);
  EXPECT_TRUE(File >= 0 && Saved >= 0);
  ::dup2(File, 2);
  F();
  ::dup2(Saved, 2);
  ::close(Saved);
  ::close(File);
  return readFile(Path);
}

TEST(LaunchProfileTest, ProfileSaysWhatEachLaunchSentAndTook) {
  ExecutorProcess Exec;
  ASSERT_TRUE(Exec.start());
  SessionOptions O;
  O.Profile = true;
  auto S = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(S);
  std::mt19937_64 Rng(5);
  auto Ins = byteInputs({100, 28}, Rng);
  std::string Said = stderrOf([&] { EXPECT_TRUE(concatMatches(*S, Ins)); });
  EXPECT_EQ(std::count(Said.begin(), Said.end(), '\n'), 1) << Said;
  for (const char *Part : {"catalyst-remote: launch ", "[zerocopy over ", " round trips, ",
                           " B sent, ", "copies host ", "; us: plan ", " kernel ", " rewrite "})
    EXPECT_NE(Said.find(Part), std::string::npos) << Part << " in: " << Said;
  O.Profile = false;
  auto Quiet = openWithConcat(Exec.address(), Strategy::ZeroCopy, O);
  ASSERT_TRUE(Quiet);
  EXPECT_EQ(stderrOf([&] { EXPECT_TRUE(concatMatches(*Quiet, Ins)); }), "");
}

} // namespace
