//===- TokenTest.cpp - The C ABI gives a session its secret ---------------===//
//
// Programs compiled by Catalyst cannot pass options to open(): the secret
// comes from CATALYST_REMOTE_TOKEN_FILE (a private file, as the executor's
// --token-file) or CATALYST_REMOTE_TOKEN (the secret itself).
//
//===----------------------------------------------------------------------===//

#include "CapiHarness.h"
#include "Text.h"
#include "TokenFile.h"

#include <sys/stat.h>

using namespace catalyst::remote::test;

namespace {

class TokenTest : public CapiTest {
protected:
  void SetUp() override {
    CapiTest::SetUp();
    ASSERT_TRUE(Exec.start({false, {}, {}, {"--token-file", Token.path()}}));
  }

  // Opens a session, sends map.o and runs one launch on it.
  void expectWorks() {
    Session.reset(__catalyst__remote__open(Exec.address().c_str()));
    ASSERT_GT(Session.get(), 0) << FailureLog::last();
    ASSERT_NO_FATAL_FAILURE(sendKernel("map"));
    std::mt19937_64 Rng(9);
    auto In = makeInput(Layout::Dense, {3, 5}, 8, Rng);
    EXPECT_TRUE(checkLaunch(Session.get(), "map", rankSizeEntry("map", 2, 8), inputsOf({In.get()}),
                            {{2, 8}}));
  }

  // Expects open to fail, once, with a message naming What.
  void expectRefused(const std::string &What) {
    size_t Before = FailureLog::count();
    Session.reset(__catalyst__remote__open(Exec.address().c_str()));
    EXPECT_EQ(Session.get(), 0);
    EXPECT_EQ(FailureLog::count(), Before + 1);
    EXPECT_TRUE(mentions(FailureLog::last(), What)) << FailureLog::last();
  }

  TokenFile Token;
};

TEST_F(TokenTest, TheTokenFileInTheEnvironmentOpensTheSession) {
  ScopedEnv File("CATALYST_REMOTE_TOKEN_FILE", Token.path().c_str());
  expectWorks();
}

TEST_F(TokenTest, TheSecretInTheEnvironmentOpensTheSession) {
  ScopedEnv Secret("CATALYST_REMOTE_TOKEN", Token.secret().c_str());
  expectWorks();
}

TEST_F(TokenTest, WithoutASecretOpenFailsSayingHowToGiveOne) {
  ScopedEnv NoFile("CATALYST_REMOTE_TOKEN_FILE", nullptr);
  ScopedEnv NoSecret("CATALYST_REMOTE_TOKEN", nullptr);
  expectRefused("CATALYST_REMOTE_TOKEN_FILE");
}

TEST_F(TokenTest, ATokenFileOthersMayReadIsNotUsed) {
  ASSERT_EQ(::chmod(Token.path().c_str(), 0644), 0);
  ScopedEnv File("CATALYST_REMOTE_TOKEN_FILE", Token.path().c_str());
  expectRefused("chmod 600");
  expectRefused("mode 0644");
}

// As `$(cat missing-file)` leaves them: a mistake, never a session without
// a secret.
TEST_F(TokenTest, AVariableSetButEmptyIsAnError) {
  for (const char *Name : {"CATALYST_REMOTE_TOKEN_FILE", "CATALYST_REMOTE_TOKEN"}) {
    ScopedEnv Empty(Name, "");
    expectRefused(std::string(Name) + " is set but empty");
  }
  // Even with a good secret in the other one.
  ScopedEnv Good("CATALYST_REMOTE_TOKEN", Token.secret().c_str());
  ScopedEnv Empty("CATALYST_REMOTE_TOKEN_FILE", "");
  expectRefused("CATALYST_REMOTE_TOKEN_FILE is set but empty");
}

TEST_F(TokenTest, AWrongSecretIsRefused) {
  TokenFile Other;
  ScopedEnv File("CATALYST_REMOTE_TOKEN_FILE", Other.path().c_str());
  expectRefused("authentication failed");
}

} // namespace
