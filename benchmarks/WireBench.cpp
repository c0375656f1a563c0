//===- WireBench.cpp - What TLS costs a session ---------------------------===//
//
// A TCP session with a token carries its bytes in TLS 1.3 records
// (wire/TlsStream.h) unless both ends say --wire plain. These rows measure
// what that costs, against sessions of the same kind with the same token
// kept plain: two executors of the same binary and token, one started with
// --wire tls and one with --wire plain, and zero-copy sessions over TCP
// (never moved to the local socket), checked to be what they claim. Each
// iteration runs both, taking turns at going first, so both see the same
// load:
//
//   wire/zerocopy/<size>   8B, 1MiB, 256MiB: a launch of forward.o with
//                          <size> each way; plain_us, tls_us, ratio_to_plain
//                          (TLS over plain, medians of the same run), and
//                          the GB/s of both (both directions counted)
//   wire/open              opening and closing a session: plain_us, tls_us,
//                          added_us (the TLS handshake: one round trip and
//                          an ECDHE exchange)
//   wire/openssl/aes-128-gcm/16KiB
//                          OpenSSL's own AES-128-GCM (EVP), the cipher of
//                          TLS_AES_128_GCM_SHA256, sealing and opening
//                          16 KiB records in this process on one CPU:
//                          seal_GBps and open_GBps, the most one CPU can
//                          move through TLS here, whatever the link
//
// Executors: two of the benchmark's own on loopback with a fresh token,
// placed as the first one was (Pinning.h); or the two that
// CATALYST_REMOTE_WIRE_TLS_ADDRESS and CATALYST_REMOTE_WIRE_PLAIN_ADDRESS
// name, with CATALYST_REMOTE_TOKEN_FILE their token (tools/bench sets them
// in its network lab). With CATALYST_REMOTE_ADDRESS set and these not, the
// session rows are skipped saying so.
//
//===----------------------------------------------------------------------===//

#include "BenchEnv.h"
#include "BenchToken.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringRef.h"

#include <cstdlib>
#include <openssl/crypto.h>
#include <openssl/evp.h>

using namespace llvm;

namespace catalyst::remote::bench {

namespace {

constexpr const char *TlsAddressVar = "CATALYST_REMOTE_WIRE_TLS_ADDRESS";
constexpr const char *PlainAddressVar = "CATALYST_REMOTE_WIRE_PLAIN_ADDRESS";
constexpr const char *TokenFileVar = "CATALYST_REMOTE_TOKEN_FILE";

// The two executors the rows compare, for the whole run.
struct WirePair {
  std::unique_ptr<BenchToken> Token; // when the executors are ours
  SecretBytes Secret;
  std::string Tls, Plain; // addresses
  std::vector<std::unique_ptr<tools::ListeningChild>> Started;
};

std::string envOr(const char *Var) {
  const char *V = std::getenv(Var);
  return V ? V : "";
}

Error givenPair(WirePair &W) {
  W.Tls = envOr(TlsAddressVar);
  W.Plain = envOr(PlainAddressVar);
  std::string TokenFile = envOr(TokenFileVar);
  if (W.Tls.empty() || W.Plain.empty() || TokenFile.empty())
    return createStringError(inconvertibleErrorCode(), "%s, %s and %s go together: set all three",
                             TlsAddressVar, PlainAddressVar, TokenFileVar);
  auto Secret = readTokenFile(TokenFile);
  if (!Secret)
    return Secret.takeError();
  W.Secret = *Secret;
  return Error::success();
}

Error startPair(BenchEnv &Env, WirePair &W) {
  auto Token = BenchToken::make();
  if (!Token)
    return Token.takeError();
  W.Token = std::move(*Token);
  W.Secret = W.Token->secret();
  for (const char *Mode : {"tls", "plain"}) {
    auto P = startLocalExecutor(Env, {"--token-file", W.Token->path(), "--wire", Mode});
    if (!P)
      return P.takeError();
    (StringRef(Mode) == "tls" ? W.Tls : W.Plain) = (*P)->address();
    W.Started.push_back(std::move(*P));
  }
  return Error::success();
}

bool named() {
  return std::getenv(TlsAddressVar) || std::getenv(PlainAddressVar);
}

// Whether the session rows can run here; Why says why not.
bool havePair(const BenchEnv &Env, std::string &Why) {
  if (Env.Given.empty() || named())
    return true;
  Why = std::string("skipped: CATALYST_REMOTE_ADDRESS is set and ") + TlsAddressVar + " is not";
  return false;
}

Expected<WirePair *> wirePair(BenchEnv &Env) {
  static WirePair W;
  if (!W.Tls.empty())
    return &W;
  if (Error Err = named() ? givenPair(W) : startPair(Env, W)) {
    W = WirePair();
    return Err;
  }
  return &W;
}

SessionOptions wireOptions(const SecretBytes &Secret, WireProtection Wire) {
  SessionOptions O;
  O.Outputs = OutputAllocator{std::malloc, std::free};
  O.Strategy = Strategy::ZeroCopy;
  O.Transport = TransportKind::Tcp;
  O.Secret = Secret;
  O.Wire = Wire;
  return O;
}

// A session that falls back to another strategy or protection would be
// measured under the wrong name.
Error checkSession(Session &S, const std::string &Address, WireProtection Wire) {
  std::string Got = S.protection();
  bool Ok = Wire == WireProtection::Tls ? StringRef(Got).starts_with("TLS") : Got == "plain";
  if (Ok && S.strategy() == Strategy::ZeroCopy && S.transport() == TransportKind::Tcp)
    return Error::success();
  return createStringError(inconvertibleErrorCode(),
                           "the session with %s runs %s over %s, %s: not zerocopy over tcp, %s",
                           Address.c_str(), strategyName(S.strategy()),
                           transportName(S.transport()), Got.c_str(), wireName(Wire));
}

Expected<std::unique_ptr<Session>> openWire(const std::string &Address, const SecretBytes &Secret,
                                            WireProtection Wire) {
  auto S = Session::open(Address, wireOptions(Secret, Wire));
  if (!S)
    return S.takeError();
  if (auto Err = checkSession(**S, Address, Wire))
    return Err;
  if (auto Err = (*S)->sendBinary(ForwardKernel, BinaryFormat::Object))
    return Err;
  return S;
}

struct WireSize {
  const char *Label;
  uint64_t Bytes; // each way
  int64_t Iterations;
};
// As the launch rows of the same sizes (TransferBench.cpp), so that a
// network link's 256MiB row takes about a minute.
constexpr WireSize WireSizes[] = {{"8B", 8, 1000}, {"1MiB", MiB, 100}, {"256MiB", 256 * MiB, 7}};

void runLaunch(benchmark::State &State, BenchEnv &Env, uint64_t Bytes) {
  std::string Why;
  if (!havePair(Env, Why))
    return skip(State, Why);
  // Each session's input, output and executor copy.
  if (skipUnlessMemory(State, 6 * Bytes, "a plain and a TLS launch"))
    return;
  auto W = wirePair(Env);
  if (!W)
    return fail(State, W.takeError());
  auto Plain = openWire((*W)->Plain, (*W)->Secret, WireProtection::Plain);
  auto Tls = openWire((*W)->Tls, (*W)->Secret, WireProtection::Tls);
  if (!Plain || !Tls)
    return fail(State, joinErrors(Plain.takeError(), Tls.takeError()));
  compareLaunches(State, **Plain, **Tls, "tls_us", Bytes);
  State.SetLabel((*Tls)->protection());
  auto &C = State.counters;
  for (const char *Wire : {"plain", "tls"})
    if (double Us = C[std::string(Wire) + "_us"].value; Us > 0)
      C[std::string(Wire) + "_GBps"] = 2.0 * double(Bytes) / Us / 1e3;
  C["payload_bytes"] = double(Bytes);
  if (auto Err = joinErrors((*Plain)->close(), (*Tls)->close()))
    return fail(State, std::move(Err));
}

void runOpen(benchmark::State &State, BenchEnv &Env) {
  std::string Why;
  if (!havePair(Env, Why))
    return skip(State, Why);
  auto W = wirePair(Env);
  if (!W)
    return fail(State, W.takeError());
  std::vector<double> Plain, Tls;
  bool TlsFirst = false;
  for (auto _ : State) {
    for (bool OnTls : {TlsFirst, !TlsFirst}) {
      auto T =
          openClose(OnTls ? (*W)->Tls : (*W)->Plain,
                    wireOptions((*W)->Secret, OnTls ? WireProtection::Tls : WireProtection::Plain));
      if (!T)
        return fail(State, T.takeError());
      (OnTls ? Tls : Plain).push_back(*T);
    }
    State.SetIterationTime(Tls.back());
    TlsFirst = !TlsFirst;
  }
  State.counters["plain_us"] = median(Plain) * 1e6;
  State.counters["tls_us"] = median(Tls) * 1e6;
  State.counters["added_us"] = (median(Tls) - median(Plain)) * 1e6;
}

// One record's worth, as TLS seals and opens them.
constexpr size_t RecordBytes = 16 * KiB;
// Records per timed pass: 64 MiB, some 10-40 ms here.
constexpr size_t RecordsPerPass = 4096;

// Seconds for Ctx (keyed, sealing or opening) to do RecordsPerPass records
// of In into Out, as TLS 1.3 does each: a nonce of its own, the record's
// header as associated data, a 16-byte tag (made when sealing; checked
// when opening, which therefore takes the last sealed record's nonce).
Expected<double> gcmPass(EVP_CIPHER_CTX *Ctx, bool Seal, const std::vector<unsigned char> &In,
                         std::vector<unsigned char> &Out, unsigned char (&Tag)[16]) {
  static const unsigned char Header[5] = {23, 3, 3, 0x40, 0x11};
  unsigned char Nonce[12] = {};
  auto Start = Clock::now();
  for (size_t I = 0; I < RecordsPerPass; ++I) {
    Nonce[11] = (unsigned char)(Seal ? I : RecordsPerPass - 1);
    int Len = 0, Tail = 0;
    bool Ok = ::EVP_CipherInit_ex(Ctx, nullptr, nullptr, nullptr, Nonce, -1) == 1 &&
              (Seal || ::EVP_CIPHER_CTX_ctrl(Ctx, EVP_CTRL_GCM_SET_TAG, 16, Tag) == 1) &&
              ::EVP_CipherUpdate(Ctx, nullptr, &Len, Header, sizeof(Header)) == 1 &&
              ::EVP_CipherUpdate(Ctx, Out.data(), &Len, In.data(), int(In.size())) == 1 &&
              ::EVP_CipherFinal_ex(Ctx, Out.data() + Len, &Tail) == 1 &&
              (!Seal || ::EVP_CIPHER_CTX_ctrl(Ctx, EVP_CTRL_GCM_GET_TAG, 16, Tag) == 1);
    if (!Ok)
      return createStringError(inconvertibleErrorCode(), "OpenSSL's AES-128-GCM failed to %s",
                               Seal ? "seal" : "open a record it sealed");
  }
  return secondsSince(Start);
}

// A context keyed once, as a TLS stream's are, sealing or opening.
EVP_CIPHER_CTX *gcmContext(bool Seal) {
  static const unsigned char Key[16] = {1};
  EVP_CIPHER_CTX *Ctx = ::EVP_CIPHER_CTX_new();
  if (Ctx && ::EVP_CipherInit_ex(Ctx, ::EVP_aes_128_gcm(), nullptr, Key, nullptr, Seal) == 1)
    return Ctx;
  ::EVP_CIPHER_CTX_free(Ctx);
  return nullptr;
}

// Seals records, then opens the last one sealed as many times: every open
// checks a real tag. Times both, reports the sealing.
void runGcm(benchmark::State &State) {
  EVP_CIPHER_CTX *Sealer = gcmContext(true), *Opener = gcmContext(false);
  scope_exit Free([&] {
    ::EVP_CIPHER_CTX_free(Sealer);
    ::EVP_CIPHER_CTX_free(Opener);
  });
  if (!Sealer || !Opener)
    return fail(State,
                createStringError(inconvertibleErrorCode(), "OpenSSL cannot set up AES-128-GCM"));
  std::vector<unsigned char> Plain(RecordBytes, 'x'), Sealed(RecordBytes), Opened(RecordBytes);
  unsigned char Tag[16] = {};
  std::vector<double> Seal, Open;
  for (auto _ : State) {
    auto S = gcmPass(Sealer, true, Plain, Sealed, Tag);
    auto O = S ? gcmPass(Opener, false, Sealed, Opened, Tag) : Expected<double>(0.0);
    if (!S || !O)
      return fail(State, joinErrors(S.takeError(), O.takeError()));
    Seal.push_back(*S);
    Open.push_back(*O);
    State.SetIterationTime(*S);
  }
  if (Opened != Plain)
    return fail(State, createStringError(inconvertibleErrorCode(),
                                         "AES-128-GCM opened other bytes than it sealed"));
  double Bytes = double(RecordBytes * RecordsPerPass);
  State.counters["seal_GBps"] = Bytes / median(Seal) / 1e9;
  State.counters["open_GBps"] = Bytes / median(Open) / 1e9;
  State.SetLabel(std::string("OpenSSL ") + ::OpenSSL_version(OPENSSL_VERSION_STRING));
}

} // namespace

void registerWireBenchmarks(BenchEnv &Env) {
  for (const WireSize &Size : WireSizes) {
    uint64_t Bytes = Size.Bytes;
    benchmark::RegisterBenchmark((std::string("wire/zerocopy/") + Size.Label).c_str(),
                                 [&Env, Bytes](benchmark::State &S) { runLaunch(S, Env, Bytes); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(Size.Iterations);
  }
  benchmark::RegisterBenchmark("wire/open", [&Env](benchmark::State &S) { runOpen(S, Env); })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(100);
  benchmark::RegisterBenchmark("wire/openssl/aes-128-gcm/16KiB", runGcm)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(10);
}

} // namespace catalyst::remote::bench
