//===- BinaryTest.cpp - Shipping objects and assets -----------------------===//

#include "CapiHarness.h"
#include "Pace.h"
#include "Procfs.h"
#include "Sockets.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace catalyst::remote::test;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// A directory of the test's own, removed with it.
class ScratchDir {
public:
  ScratchDir() {
    Path = fs::temp_directory_path() /
           ("catalyst-remote-test-" + std::to_string(::getpid()) + "-" + std::to_string(Next++));
    fs::create_directories(Path);
  }
  ~ScratchDir() {
    std::error_code EC;
    fs::remove_all(Path, EC);
  }
  fs::path operator/(const std::string &Name) const { return Path / Name; }

private:
  static inline int Next = 0;
  fs::path Path;
};

std::string writeBytes(const fs::path &P, const std::string &Bytes) {
  std::ofstream(P, std::ios::binary) << Bytes;
  return P.string();
}

// Bytes that a text-mode or NUL-terminated copy would mangle.
std::string assetBytes(size_t N, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::string S(N, '\0');
  for (char &C : S)
    C = char(Rng());
  S[0] = '\0';
  S[1] = '\r';
  S[2] = '\n';
  return S;
}

// A directory only this user can use, reached without a symlink.
void expectPrivate(const fs::path &P) {
  struct stat St;
  ASSERT_EQ(::lstat(P.c_str(), &St), 0) << P;
  EXPECT_TRUE(S_ISDIR(St.st_mode)) << P << " is not a directory";
  EXPECT_EQ(St.st_uid, ::geteuid()) << P;
  EXPECT_EQ(St.st_mode & 07777, 0700u) << P << " has mode " << std::oct << (St.st_mode & 07777);
}

// Waits until P no longer exists.
bool gone(const fs::path &P, std::chrono::seconds Timeout = paced(std::chrono::seconds(5))) {
  auto Deadline = Clock::now() + Timeout;
  while (fs::exists(P) && Clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !fs::exists(P);
}

class BinaryTestBase : public CapiTest {
protected:
  // The test plugin reads assets as a kernel would; Env adds to the
  // executor's environment.
  void startWithPlugin(std::vector<std::string> Env = {}) {
    ExecutorOptions Options;
    Options.Plugins = {TEST_PLUGIN_PATH};
    Options.Env = std::move(Env);
    ASSERT_NO_FATAL_FAILURE(startAndOpen(Options));
  }

  int64_t send(const std::string &Path, uint32_t Format) {
    return __catalyst__remote__send_binary(Session.get(), Path.c_str(), Format);
  }

  pid_t connectionPid() {
    std::vector<pid_t> Pids;
    EXPECT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
    return Pids.empty() ? -1 : Pids[0];
  }

  // Calls a test plugin function in Handle's connection process.
  std::optional<std::string> call(int64_t Handle, const std::string &Symbol,
                                  const std::string &Args) {
    void *Out = nullptr;
    size_t Size = 0;
    if (__catalyst__remote__call_wrapper(Handle, Symbol.c_str(), Args.data(), Args.size(), &Out,
                                         &Size) != 0)
      return std::nullopt;
    std::string Result(static_cast<char *>(Out), Size);
    __catalyst__remote__free_result(Out);
    return Result;
  }

  // The connection's asset directory, as its kernels see it.
  fs::path assetDir(int64_t Handle = 0) {
    auto Dir = call(Handle ? Handle : Session.get(), "test_plugin_asset_dir", "");
    EXPECT_TRUE(Dir.has_value()) << FailureLog::last();
    return Dir.value_or("");
  }

  // What a kernel reads as asset Name ("<unreadable>" when it cannot).
  std::string readAsset(const std::string &Name) {
    return call(Session.get(), "test_plugin_read_asset", Name).value_or("<unreadable>");
  }

  ScratchDir Scratch;
};

class BinaryTest : public BinaryTestBase {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startWithPlugin());
  }
};

// An executor with a temporary directory of the test's own.
class BinaryRootTest : public BinaryTestBase {
protected:
  void startIn(const fs::path &Dir) {
    fs::create_directories(Dir);
    startWithPlugin({"TMPDIR=" + Dir.string()});
  }

  fs::path Tmp = Scratch / "tmp";
};

// Over TCP, where the kernel counts the bytes sent (tcpBytesSentTo).
class BinaryBytesTest : public BinaryTestBase {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ScopedEnv Tcp("CATALYST_REMOTE_TRANSPORT", "tcp");
    ASSERT_NO_FATAL_FAILURE(startWithPlugin());
  }
};

TEST_F(BinaryTest, SameEntryNameInTwoObjects) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_a"));
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_b"));
  auto In = makeDenseInput<int32_t>({3}, {1, 2, 3});
  Outputs A({{1, 4}}), B({{1, 4}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("same_name"), "same_name_a.o", {&In->D}, A));
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("same_name"), "same_name_b.o", {&In->D}, B));
  EXPECT_EQ(as<int32_t>(A[0].values()), (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(as<int32_t>(B[0].values()), (std::vector<int32_t>{10, 20, 30}));
  // Naming the object by its full path works as well.
  Outputs ByPath({{1, 4}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("same_name"), kernelObject("same_name_b"),
                           {&In->D}, ByPath));
  EXPECT_EQ(ByPath[0].values(), B[0].values());
  EXPECT_TRUE(checkLaunch(Session.get(), "same_name_a", "same_name", {&In->D}, {{1, 4}}));
  EXPECT_TRUE(checkLaunch(Session.get(), "same_name_b", "same_name", {&In->D}, {{1, 4}}));
}

TEST_F(BinaryTest, SameFileNameInTwoDirectoriesNeedsThePath) {
  fs::create_directories(Scratch / "one");
  fs::create_directories(Scratch / "two");
  fs::copy_file(kernelObject("same_name_a"), Scratch / "one" / "k.o");
  fs::copy_file(kernelObject("same_name_b"), Scratch / "two" / "k.o");
  ASSERT_EQ(send((Scratch / "one" / "k.o").string(), 0), 0) << FailureLog::last();
  ASSERT_EQ(send((Scratch / "two" / "k.o").string(), 0), 0) << FailureLog::last();
  auto In = makeDenseInput<int32_t>({2}, {5, 6});
  Outputs Ambiguous({{1, 4}});
  EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("same_name"), "k.o", {&In->D}, Ambiguous));
  EXPECT_NE(FailureLog::last().find("k.o"), std::string::npos) << FailureLog::last();
  Outputs Two({{1, 4}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("same_name"),
                           (Scratch / "two" / "k.o").string(), {&In->D}, Two));
  EXPECT_EQ(as<int32_t>(Two[0].values()), (std::vector<int32_t>{50, 60}));
}

TEST_F(BinaryBytesTest, SamePathTwiceIsANoOp) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_a"));
  // Linking it again would ship the object again (and give the file name
  // two objects, so a launch by it would be ambiguous): a no-op sends
  // nothing at all.
  uint64_t Before = tcpBytesSentTo(Exec.address());
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_a"));
  EXPECT_EQ(tcpBytesSentTo(Exec.address()), Before);
  auto In = makeDenseInput<int32_t>({1}, {41});
  Outputs Out({{1, 4}});
  ASSERT_TRUE(launchRemote(Session.get(), remoteEntry("same_name"), "same_name_a.o", {&In->D}, Out))
      << FailureLog::last();
  EXPECT_EQ(as<int32_t>(Out[0].values()), (std::vector<int32_t>{42}));
  // The count sees a link: another object sends its code.
  Before = tcpBytesSentTo(Exec.address());
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_b"));
  EXPECT_GT(tcpBytesSentTo(Exec.address()), Before);
}

TEST_F(BinaryTest, UnknownFormatIsAnError) {
  std::string Path = kernelObject("map");
  EXPECT_EQ(send(Path, 7), -1);
  EXPECT_NE(FailureLog::last().find("format"), std::string::npos) << FailureLog::last();
  EXPECT_NE(FailureLog::last().find("7"), std::string::npos) << FailureLog::last();
}

TEST_F(BinaryTest, TextFileIsNotAnObject) {
  std::string Path = writeBytes(Scratch / "notes.o", "this is not an object file\n");
  EXPECT_EQ(send(Path, 0), -1);
  EXPECT_NE(FailureLog::last().find(Path), std::string::npos) << FailureLog::last();
  // The session is still usable.
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_a"));
}

// As in Catalyst's runtime: nothing to send, once the session is known.
TEST_F(BinaryTest, EmptyPathIsANoOp) {
  EXPECT_EQ(send("", 0), 0) << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__send_binary(Session.get(), nullptr, 1), 0) << FailureLog::last();
  EXPECT_EQ(FailureLog::count(), 0u) << FailureLog::last();
  EXPECT_EQ(__catalyst__remote__send_binary(Session.get() + 100, "", 0), -1);
  EXPECT_NE(FailureLog::last().find("unknown session"), std::string::npos) << FailureLog::last();
}

TEST_F(BinaryTest, MissingFileIsAnError) {
  std::string Path = (Scratch / "absent.o").string();
  EXPECT_EQ(send(Path, 0), -1);
  EXPECT_NE(FailureLog::last().find(Path), std::string::npos) << FailureLog::last();
  EXPECT_EQ(send(Path, 1), -1);
  EXPECT_NE(FailureLog::last().find(Path), std::string::npos) << FailureLog::last();
}

TEST_F(BinaryTest, UnresolvedSymbolFailsTheLink) {
  EXPECT_EQ(send(kernelObject("missing_symbol"), 0), -1);
  EXPECT_NE(FailureLog::last().find("catalyst_test_no_such_function"), std::string::npos)
      << FailureLog::last();
  EXPECT_NE(FailureLog::last().find("missing_symbol.o"), std::string::npos) << FailureLog::last();
}

TEST_F(BinaryTest, AssetIsStoredByteForByte) {
  std::string Bytes = assetBytes(300 * 1024, 1);
  std::string Path = writeBytes(Scratch / "weights.bin", Bytes);
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  EXPECT_EQ(readAsset("weights.bin"), Bytes);
  fs::path Stored = assetDir() / "weights.bin";
  EXPECT_EQ(readFile(Stored.string()), Bytes) << Stored;
  EXPECT_EQ(fs::status(Stored).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  // An empty asset is still a file.
  ASSERT_EQ(send(writeBytes(Scratch / "empty.txt", ""), 1), 0) << FailureLog::last();
  EXPECT_TRUE(fs::is_regular_file(assetDir() / "empty.txt"));
  EXPECT_EQ(fs::file_size(assetDir() / "empty.txt"), 0u);
  // Nothing but the assets: no temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(assetDir()), fs::directory_iterator()), 2);
}

// Where Catalyst's executor stores them, and its kernels look:
// $TMPDIR/catalyst-assets/<connection pid>.
TEST_F(BinaryRootTest, AssetsGoWhereCatalystsExecutorPutsThem) {
  ASSERT_NO_FATAL_FAILURE(startIn(Tmp));
  fs::path Dir = assetDir();
  ASSERT_FALSE(Dir.empty());
  fs::path Root = Dir.parent_path();
  EXPECT_EQ(Root, Tmp / "catalyst-assets");
  expectPrivate(Dir);
  expectPrivate(Root);
  EXPECT_EQ(Dir.filename(), std::to_string(connectionPid()));

  // Another executor shares the root, each connection its own directory.
  ExecutorProcess Other;
  ExecutorOptions Options;
  Options.Plugins = {TEST_PLUGIN_PATH};
  Options.Env = {"TMPDIR=" + Tmp.string()};
  ASSERT_TRUE(Other.start(Options));
  ScopedSession OtherSession(__catalyst__remote__open(Other.address().c_str()));
  ASSERT_GT(OtherSession.get(), 0) << FailureLog::last();
  fs::path OtherDir = assetDir(OtherSession.get());
  EXPECT_EQ(OtherDir.parent_path(), Root);
  EXPECT_NE(OtherDir, Dir);
  // Its directory goes when its executor stops; the root stays for others.
  OtherSession.reset();
  ASSERT_TRUE(Other.stop());
  EXPECT_TRUE(gone(OtherDir)) << OtherDir << " outlived its executor";
  EXPECT_TRUE(fs::is_directory(Root));
  EXPECT_TRUE(fs::is_directory(Dir));
}

// Catalyst's executor makes the root with the umask's mode: still ours, and
// no one else may write to it, so it is used as it is.
TEST_F(BinaryRootTest, ARootOfThisUserThatOthersCannotWriteToIsUsed) {
  fs::create_directories(Tmp / "catalyst-assets");
  fs::permissions(Tmp / "catalyst-assets", fs::perms::owner_all | fs::perms::group_read |
                                               fs::perms::group_exec | fs::perms::others_read |
                                               fs::perms::others_exec);
  ASSERT_NO_FATAL_FAILURE(startIn(Tmp));
  fs::path Dir = assetDir();
  EXPECT_EQ(Dir.parent_path(), Tmp / "catalyst-assets");
  expectPrivate(Dir);
  ASSERT_EQ(send(writeBytes(Scratch / "w.bin", "weights"), 1), 0) << FailureLog::last();
  EXPECT_EQ(readFile((Dir / "w.bin").string()), "weights");
}

// A connection's directory that a killed executor left behind, under a pid
// a new connection process now has, is replaced, not reused.
TEST_F(BinaryRootTest, AStaleDirectoryOfTheSamePidIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(startIn(Tmp));
  pid_t Last = connectionPid();
  fs::path Dir = assetDir();
  Session.reset();
  ASSERT_TRUE(gone(Dir));
  // The next connection process's pid cannot be known: plant a stale
  // directory under each of the next few thousand (Linux hands out pids in
  // turn).
  std::set<fs::path> Planted;
  for (pid_t P = Last + 1; P < Last + 5000; ++P) {
    fs::path Stale = Tmp / "catalyst-assets" / std::to_string(P);
    if (fs::create_directory(Stale)) {
      writeBytes(Stale / "left.bin", "from a killed executor");
      Planted.insert(Stale);
    }
  }
  int64_t H = __catalyst__remote__open(Exec.address().c_str());
  ASSERT_GT(H, 0) << FailureLog::last();
  Session.reset(H);
  fs::path Fresh = assetDir();
  ASSERT_TRUE(Planted.count(Fresh)) << Fresh << ": not a pid the test planted a directory for";
  EXPECT_FALSE(fs::exists(Fresh / "left.bin")) << Fresh << " kept a stale asset";
  expectPrivate(Fresh);
}

TEST_F(BinaryTest, SameFileNameFromTwoFoldersIsRefused) {
  fs::create_directories(Scratch / "one");
  fs::create_directories(Scratch / "two");
  std::string One = writeBytes(Scratch / "one" / "x.txt", "first");
  std::string Two = writeBytes(Scratch / "two" / "x.txt", "second");
  ASSERT_EQ(send(One, 1), 0) << FailureLog::last();
  EXPECT_EQ(send(Two, 1), -1);
  EXPECT_NE(FailureLog::last().find(One), std::string::npos) << FailureLog::last();
  EXPECT_NE(FailureLog::last().find(Two), std::string::npos) << FailureLog::last();
  EXPECT_EQ(readAsset("x.txt"), "first");
  // The same file named another way is the same asset.
  EXPECT_EQ(send((Scratch / "two" / ".." / "one" / "x.txt").string(), 1), 0) << FailureLog::last();
  EXPECT_EQ(readAsset("x.txt"), "first");
}

TEST_F(BinaryTest, ChangedAssetIsSentAgain) {
  fs::path P = Scratch / "config.json";
  ASSERT_EQ(send(writeBytes(P, "{\"v\": 1}"), 1), 0) << FailureLog::last();
  EXPECT_EQ(readAsset("config.json"), "{\"v\": 1}");
  // Same size and same modification time: only the bytes tell.
  auto Stamp = fs::last_write_time(P);
  writeBytes(P, "{\"v\": 2}");
  fs::last_write_time(P, Stamp);
  ASSERT_EQ(send(P.string(), 1), 0) << FailureLog::last();
  EXPECT_EQ(readAsset("config.json"), "{\"v\": 2}");
}

TEST_F(BinaryBytesTest, UnchangedAssetTwiceSendsNothing) {
  constexpr size_t Size = 64 * 1024;
  std::string Bytes = assetBytes(Size, 4);
  std::string Path = writeBytes(Scratch / "table.bin", Bytes);
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  uint64_t Before = tcpBytesSentTo(Exec.address());
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  EXPECT_EQ(tcpBytesSentTo(Exec.address()), Before);
  // The count sees a send: a changed byte sends the file again.
  Bytes[Size / 2] ^= 1;
  writeBytes(Path, Bytes);
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  EXPECT_GE(tcpBytesSentTo(Exec.address()) - Before, Size);
  EXPECT_EQ(readAsset("table.bin"), Bytes);
}

TEST_F(BinaryTest, AssetsLiveAsLongAsTheirConnection) {
  std::string Path = writeBytes(Scratch / "a.dat", assetBytes(1000, 2));
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  fs::path First = assetDir();
  ASSERT_TRUE(fs::exists(First / "a.dat"));
  Session.reset();
  EXPECT_TRUE(gone(First)) << First << " outlived its connection";

  // A new connection gets a directory of its own.
  int64_t H = __catalyst__remote__open(Exec.address().c_str());
  ASSERT_GT(H, 0) << FailureLog::last();
  Session.reset(H);
  std::string Other = writeBytes(Scratch / "b.dat", assetBytes(2000, 3));
  ASSERT_EQ(send(Other, 1), 0) << FailureLog::last();
  fs::path Second = assetDir();
  ASSERT_NE(Second, First);
  EXPECT_EQ(readAsset("b.dat"), assetBytes(2000, 3));
  EXPECT_FALSE(fs::exists(Second / "a.dat"));
  Session.reset();
  EXPECT_TRUE(gone(Second));
}

TEST_F(BinaryTest, AssetsOfACrashedConnectionAreRemoved) {
  ASSERT_EQ(send(writeBytes(Scratch / "a.dat", "kept until the crash"), 1), 0)
      << FailureLog::last();
  fs::path Dir = assetDir();
  ASSERT_TRUE(fs::exists(Dir / "a.dat"));
  ASSERT_NO_FATAL_FAILURE(sendKernel("crash"));
  Outputs None(std::vector<OutSpec>{});
  EXPECT_FALSE(launchRemote(Session.get(), remoteEntry("crash"), "crash.o", {}, None));
  EXPECT_TRUE(gone(Dir)) << Dir << " outlived its crashed connection";
  // The root stays for the connections to come.
  EXPECT_TRUE(fs::is_directory(Dir.parent_path()));
}

// An executor stopped right after it said where it listens still removes
// its directory: the signal can come before it is ready to serve.
TEST(AssetRootTest, ExecutorStoppedAtOnceLeavesNothing) {
  ScratchDir Scratch;
  fs::create_directories(Scratch / "tmp");
  ExecutorOptions Options;
  Options.Env = {"TMPDIR=" + (Scratch / "tmp").string()};
  // The race is lost often but not always: try it several times.
  for (int I = 0; I < 10; ++I) {
    ExecutorProcess Exec;
    ASSERT_TRUE(Exec.start(Options));
    ASSERT_TRUE(Exec.stop());
  }
  // Only the shared root stays, empty: other executors may be using it.
  for (auto &E : fs::directory_iterator(Scratch / "tmp")) {
    EXPECT_EQ(E.path().filename(), "catalyst-assets") << E.path();
    EXPECT_TRUE(fs::is_empty(E.path())) << fs::directory_iterator(E.path())->path();
  }
}

// What another local user could have put at $TMPDIR/catalyst-assets.
enum class Plant { Symlink, OpenDirectory, OtherUsersDirectory };

const char *plantName(Plant P) {
  switch (P) {
  case Plant::Symlink:
    return "Symlink";
  case Plant::OpenDirectory:
    return "OpenDirectory";
  case Plant::OtherUsersDirectory:
    return "OtherUsersDirectory";
  }
  return "?";
}

void PrintTo(Plant P, std::ostream *OS) {
  *OS << plantName(P);
}

class PlantedAssetPathTest : public BinaryTestBase, public ::testing::WithParamInterface<Plant> {
protected:
  // Makes the plant; returns where an asset that followed it would go.
  fs::path plant(const fs::path &At) {
    fs::path Trap = Scratch / "trap";
    fs::create_directories(Trap);
    switch (GetParam()) {
    case Plant::Symlink:
      fs::create_directory_symlink(Trap, At);
      return Trap;
    case Plant::OpenDirectory:
      fs::create_directory(At);
      fs::permissions(At, fs::perms::all);
      return At;
    case Plant::OtherUsersDirectory:
      fs::create_directory(At);
      // nobody's, with a mode that would otherwise pass.
      EXPECT_EQ(::chown(At.c_str(), 65534, 65534), 0) << std::strerror(errno);
      fs::permissions(At, fs::perms::owner_all);
      return At;
    }
    return Trap;
  }
};

// The executor falls back to a private root of its own and says why.
TEST_P(PlantedAssetPathTest, IsNeitherFollowedNorUsed) {
  if (GetParam() == Plant::OtherUsersDirectory && ::geteuid() != 0)
    GTEST_SKIP() << "giving a directory to another user needs root";
  fs::path Tmp = Scratch / "tmp", Log = Scratch / "executor.log";
  fs::create_directories(Tmp);
  fs::path Trap = plant(Tmp / "catalyst-assets");
  ExecutorOptions Options;
  Options.Plugins = {TEST_PLUGIN_PATH};
  Options.Env = {"TMPDIR=" + Tmp.string()};
  Options.LogPath = Log.string();
  ASSERT_NO_FATAL_FAILURE(startAndOpen(Options));
  ASSERT_EQ(send(writeBytes(Scratch / "secret.txt", "not for others"), 1), 0) << FailureLog::last();
  EXPECT_EQ(readAsset("secret.txt"), "not for others");
  EXPECT_TRUE(fs::is_empty(Trap)) << "the asset went to " << Trap;
  fs::path Root = assetDir().parent_path();
  EXPECT_EQ(Root.parent_path(), Tmp);
  EXPECT_EQ(Root.filename().string().rfind("catalyst-remote-", 0), 0u) << Root;
  expectPrivate(Root);
  std::string Said = readFile(Log.string());
  EXPECT_NE(Said.find("assets go to " + Root.string()), std::string::npos) << Said;
  EXPECT_NE(Said.find((Tmp / "catalyst-assets").string()), std::string::npos) << Said;
}

INSTANTIATE_TEST_SUITE_P(Plants, PlantedAssetPathTest,
                         ::testing::Values(Plant::Symlink, Plant::OpenDirectory,
                                           Plant::OtherUsersDirectory),
                         [](const auto &Info) { return plantName(Info.param); });

} // namespace
