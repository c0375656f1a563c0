//===- AssetNameTest.cpp - The executor's checks on asset names -----------===//
//
// A session sends only file names, but Catalyst's own host sends full
// paths, and anyone who can reach the port may send any string to
// catalyst_remote_store_asset. These tests call the service directly over
// ORC EPC and check that the executor stores the name's last component in
// the connection's directory, never anywhere else, and never over another
// file of the session.
//
//===----------------------------------------------------------------------===//

#include "ExecutorProcess.h"
#include "Procfs.h"
#include "session/Connect.h"
#include "wire/Protocol.h"
#include "wire/SocketTransport.h"

#include "llvm/ExecutionEngine/Orc/SimpleRemoteEPC.h"
#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"

#include <filesystem>
#include <unistd.h>

using namespace catalyst::remote;
using namespace catalyst::remote::test;
using namespace llvm;
using namespace llvm::orc;
namespace fs = std::filesystem;

namespace {

class AssetNameTest : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directories(Tmp);
    ExecutorOptions Options;
    Options.Env = {"TMPDIR=" + Tmp.string()};
    ASSERT_TRUE(Exec.start(Options));
    auto Fd = connectTo(Exec.address(), std::chrono::seconds(10));
    ASSERT_TRUE(bool(Fd)) << toString(Fd.takeError());
    wire::SocketTransport *Transport = nullptr;
    auto EPC = SimpleRemoteEPC::Create<wire::SocketTransport>(
        std::make_unique<DynamicThreadPoolTaskDispatcher>(std::nullopt), SimpleRemoteEPC::Setup(),
        *Fd, wire::TransportOptions(), &Transport);
    ASSERT_TRUE(bool(EPC)) << toString(EPC.takeError());
    ES = std::make_unique<ExecutionSession>(std::move(*EPC));
    auto &Symbols = ES->getExecutorProcessControl().getBootstrapSymbolsMap();
    ASSERT_TRUE(Symbols.count(wire::StoreAssetName));
    Store = Symbols.find(wire::StoreAssetName)->second;
  }

  void TearDown() override {
    if (ES) {
      Error Err = ES->endSession();
      EXPECT_FALSE(bool(Err)) << toString(std::move(Err));
    }
    EXPECT_TRUE(Exec.stop());
    fs::remove_all(Dir);
  }

  // The service's answer to storing Bytes as Name: 0 stored, -1 refused.
  int32_t store(const std::string &Name, const std::string &Bytes) {
    int32_t Rc = 1;
    ArrayRef<char> Data(Bytes.data(), Bytes.size());
    if (auto Err = ES->getExecutorProcessControl().callSPSWrapper<wire::SPSStoreAssetSig>(
            Store, Rc, Data, Name))
      ADD_FAILURE() << toString(std::move(Err));
    return Rc;
  }

  // Every file under the executor's temporary directory, by path from it.
  std::vector<std::string> filesUnderTmp() {
    std::vector<std::string> Files;
    for (auto &E : fs::recursive_directory_iterator(Tmp))
      if (!E.is_directory())
        Files.push_back(fs::relative(E.path(), Tmp).string());
    return Files;
  }

  fs::path Dir = fs::temp_directory_path() / ("catalyst-remote-names-" + std::to_string(getpid()));
  fs::path Tmp = Dir / "tmp";
  ExecutorProcess Exec;
  std::unique_ptr<ExecutionSession> ES;
  ExecutorAddr Store;
};

TEST_F(AssetNameTest, StoredUnderTheLastComponentOfTheName) {
  // Catalyst's host sends the file's full path; this project's, its name.
  ASSERT_EQ(store("plain.txt", "plain"), 0);
  ASSERT_EQ(store("/data/run/weights.bin", "weights"), 0);
  ASSERT_EQ(store("../../escaped.txt", "escaped"), 0);
  auto Stored = filesUnderTmp();
  ASSERT_EQ(Stored.size(), 3u);
  fs::path Dir = Tmp / fs::path(Stored[0]).parent_path();
  EXPECT_EQ(Dir.parent_path(), Tmp / "catalyst-assets");
  EXPECT_EQ(readFile((Dir / "plain.txt").string()), "plain");
  EXPECT_EQ(readFile((Dir / "weights.bin").string()), "weights");
  EXPECT_EQ(readFile((Dir / "escaped.txt").string()), "escaped");
}

TEST_F(AssetNameTest, NamesThatEndInNoFileNameAreRefused) {
  for (std::string Bad :
       {std::string("."), std::string(".."), std::string(""), std::string("nul\0.txt", 8),
        std::string("dir/nul\0", 8), std::string("trailing/"), std::string("/"),
        std::string("a/.."), std::string("a/.")}) {
    EXPECT_EQ(store(Bad, "no"), -1) << "'" << Bad << "' was accepted";
  }
  EXPECT_EQ(filesUnderTmp(), std::vector<std::string>()) << "a refused name left a file behind";
}

TEST_F(AssetNameTest, AnotherFileOfTheSameNameDoesNotReplaceTheFirst) {
  ASSERT_EQ(store("/one/x.txt", "first"), 0);
  auto Stored = filesUnderTmp();
  ASSERT_EQ(Stored.size(), 1u);
  std::string Path = (Tmp / Stored[0]).string();
  EXPECT_EQ(store("/two/x.txt", "second"), -1);
  EXPECT_EQ(readFile(Path), "first");
  // The same name again replaces the file, as a changed file is sent again.
  EXPECT_EQ(store("/one/x.txt", "changed"), 0);
  EXPECT_EQ(readFile(Path), "changed");
  EXPECT_EQ(filesUnderTmp(), Stored);
}

} // namespace
