//===- KernelClient.h - The gRPC baseline's client --------------*- C++ -*-===//
//
// Calls catalyst-remote-grpc-server's Launch with a payload of N bytes, as a
// rank-1 tensor, and times the call. gRPC stays behind this header: code
// that uses the client needs neither gRPC's headers nor its flags.
//
// gRPC caps one message at 2 GiB - 1 bytes, protobuf encoding included, so
// of the benchmark's power-of-two sizes 1 GiB each way is the largest a call
// carries; larger payloads are refused before anything is sent.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_GRPC_KERNELCLIENT_H
#define CATALYST_REMOTE_BENCH_GRPC_KERNELCLIENT_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace catalyst::remote::grpcbench {

constexpr uint64_t MaxPayloadBytes = uint64_t(1) << 30;

// Why a payload of Bytes cannot be carried: empty when it can.
std::string payloadTooLarge(uint64_t Bytes);

// TCP payload bytes, both directions, as the kernel counts them: gRPC's
// HTTP/2 framing, headers and flow-control traffic included, retransmitted
// bytes not.
struct WireBytes {
  uint64_t Sent = 0;
  uint64_t Received = 0;
};

// How much of a reply call() compares with what was sent. Comparing every
// byte costs as much as a large call, so timed calls check the ends only.
enum class Check { Ends, Everything };

// Operations that can fail return why, or an empty string on success.
class KernelClient {
public:
  // Opens a channel of its own (one TCP connection) to Address, "host:port",
  // and waits up to Timeout for it to connect.
  static std::unique_ptr<KernelClient>
  connect(const std::string &Address, std::chrono::milliseconds Timeout, std::string &Error);
  ~KernelClient();
  KernelClient(const KernelClient &) = delete;
  KernelClient &operator=(const KernelClient &) = delete;

  // One Launch carrying In[0, Bytes) there and back. Seconds covers copying
  // In into the request, the call, and parsing the reply into a fresh
  // message, as a launch's time covers its fresh output buffer; releasing the
  // reply and checking it come after.
  std::string call(const char *In, uint64_t Bytes, Check How, double &Seconds);

  // Two untimed calls: the first checks every byte and lets the connection
  // settle; the bytes the second put on the wire go to PerCall.
  std::string warmUp(const char *In, uint64_t Bytes, WireBytes &PerCall);

  // What this client's connection has carried so far.
  std::string wireBytes(WireBytes &Total) const;

private:
  struct Impl;
  explicit KernelClient(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

} // namespace catalyst::remote::grpcbench

#endif
