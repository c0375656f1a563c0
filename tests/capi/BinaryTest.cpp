//===- BinaryTest.cpp - Shipping objects and assets -----------------------===//

#include "CapiHarness.h"
#include "Procfs.h"

#include <filesystem>
#include <fstream>
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

fs::path assetDir(pid_t ConnectionPid) {
  return fs::temp_directory_path() / "catalyst-assets" / std::to_string(ConnectionPid);
}

// Waits until P no longer exists.
bool gone(const fs::path &P, std::chrono::seconds Timeout = std::chrono::seconds(5)) {
  auto Deadline = Clock::now() + Timeout;
  while (fs::exists(P) && Clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !fs::exists(P);
}

class BinaryTest : public CapiTest {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(startAndOpen());
  }

  int64_t send(const std::string &Path, uint32_t Format) {
    return __catalyst__remote__send_binary(Session.get(), Path.c_str(), Format);
  }

  pid_t connectionPid() {
    std::vector<pid_t> Pids;
    EXPECT_TRUE(Exec.waitForConnections(1, Pids, std::chrono::seconds(5)));
    return Pids.empty() ? -1 : Pids[0];
  }

  ScratchDir Scratch;
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

TEST_F(BinaryTest, SamePathTwiceIsANoOp) {
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_a"));
  // A second link of the same object would clash on its symbols.
  ASSERT_NO_FATAL_FAILURE(sendKernel("same_name_a"));
  auto In = makeDenseInput<int32_t>({1}, {41});
  Outputs Out({{1, 4}});
  ASSERT_TRUE(
      launchRemote(Session.get(), remoteEntry("same_name"), "same_name_a.o", {&In->D}, Out));
  EXPECT_EQ(as<int32_t>(Out[0].values()), (std::vector<int32_t>{42}));
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
  pid_t Conn = connectionPid();
  ASSERT_GT(Conn, 0);
  fs::path Stored = assetDir(Conn) / "weights.bin";
  EXPECT_EQ(readFile(Stored.string()), Bytes) << Stored;
  // An empty asset is still a file.
  ASSERT_EQ(send(writeBytes(Scratch / "empty.txt", ""), 1), 0) << FailureLog::last();
  EXPECT_TRUE(fs::is_regular_file(assetDir(Conn) / "empty.txt"));
  EXPECT_EQ(fs::file_size(assetDir(Conn) / "empty.txt"), 0u);
}

TEST_F(BinaryTest, SameAssetPathTwiceIsNotSentAgain) {
  std::string Path = writeBytes(Scratch / "config.json", "{\"v\": 1}");
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  writeBytes(Scratch / "config.json", "{\"v\": 2}");
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  EXPECT_EQ(readFile((assetDir(connectionPid()) / "config.json").string()), "{\"v\": 1}");
}

TEST_F(BinaryTest, AssetsLiveAsLongAsTheirConnection) {
  std::string Path = writeBytes(Scratch / "a.dat", assetBytes(1000, 2));
  ASSERT_EQ(send(Path, 1), 0) << FailureLog::last();
  pid_t First = connectionPid();
  ASSERT_TRUE(fs::exists(assetDir(First) / "a.dat"));
  Session.reset();
  EXPECT_TRUE(gone(assetDir(First))) << assetDir(First) << " outlived its connection";

  // A new connection gets a directory of its own.
  int64_t H = __catalyst__remote__open(Exec.address().c_str());
  ASSERT_GT(H, 0) << FailureLog::last();
  Session.reset(H);
  std::string Other = writeBytes(Scratch / "b.dat", assetBytes(2000, 3));
  ASSERT_EQ(send(Other, 1), 0) << FailureLog::last();
  pid_t Second = connectionPid();
  ASSERT_NE(Second, First);
  EXPECT_EQ(readFile((assetDir(Second) / "b.dat").string()), assetBytes(2000, 3));
  EXPECT_FALSE(fs::exists(assetDir(Second) / "a.dat"));
  Session.reset();
  EXPECT_TRUE(gone(assetDir(Second)));
}

} // namespace
