//===- KernelClient.cpp - The gRPC baseline's client ----------------------===//

#include "KernelClient.h"

#include "WireBytes.h"
#include "kernel.grpc.pb.h"

#include <climits>
#include <cstring>
#include <grpcpp/grpcpp.h>

namespace catalyst::remote::grpcbench {

namespace {

using Clock = std::chrono::steady_clock;
// gRPC takes deadlines on the system clock only.
using DeadlineClock = std::chrono::system_clock;

// No call of the benchmark comes near this; it only keeps a stuck server
// from hanging the benchmark.
constexpr auto CallDeadline = std::chrono::minutes(2);

std::shared_ptr<grpc::Channel> openChannel(const std::string &Address) {
  grpc::ChannelArguments Args;
  // gRPC refuses messages over 4 MiB by default; INT_MAX is its own limit.
  Args.SetMaxReceiveMessageSize(INT_MAX);
  Args.SetMaxSendMessageSize(INT_MAX);
  // gRPC would share one connection among channels to the same address;
  // wireBytes() counts a connection, so each client gets its own.
  Args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(Address, grpc::InsecureChannelCredentials(), Args);
}

std::string describe(const grpc::Status &S) {
  return "Launch failed (gRPC status " + std::to_string(int(S.error_code())) +
         "): " + S.error_message();
}

std::string checkReply(const Tensor &Reply, const char *In, uint64_t Bytes, Check How) {
  const std::string &Got = Reply.data();
  if (Got.size() != Bytes || Reply.shape_size() != 1 || Reply.shape(0) != int64_t(Bytes))
    return "the server returned " + std::to_string(Got.size()) + " bytes, expected " +
           std::to_string(Bytes);
  if (Bytes == 0)
    return {};
  bool Same = How == Check::Everything ? std::memcmp(Got.data(), In, Bytes) == 0
                                       : Got.front() == In[0] && Got.back() == In[Bytes - 1];
  return Same ? std::string() : "the server returned bytes that differ from its input";
}

} // namespace

std::string payloadTooLarge(uint64_t Bytes) {
  if (Bytes <= MaxPayloadBytes)
    return {};
  return std::to_string(Bytes) +
         " bytes each way is more than gRPC carries: a message is at "
         "most 2 GiB - 1 bytes, encoding included, so 1 GiB is the largest payload measured";
}

struct KernelClient::Impl {
  std::shared_ptr<grpc::Channel> Channel;
  std::unique_ptr<Kernel::Stub> Stub;
  // Reused so its buffer is allocated once, as a caller sending many
  // requests would keep one.
  Tensor Request;
  ServerSockets Sockets;
};

KernelClient::KernelClient(std::unique_ptr<Impl> I) : I(std::move(I)) {}
KernelClient::~KernelClient() = default;

std::unique_ptr<KernelClient> KernelClient::connect(const std::string &Address,
                                                    std::chrono::milliseconds Timeout,
                                                    std::string &Error) {
  auto I = std::make_unique<Impl>();
  Error = I->Sockets.resolve(Address);
  if (!Error.empty())
    return nullptr;
  I->Channel = openChannel(Address);
  if (!I->Channel->WaitForConnected(DeadlineClock::now() + Timeout)) {
    Error = "cannot connect to the gRPC server at " + Address + " within " +
            std::to_string(Timeout.count()) + " ms";
    return nullptr;
  }
  I->Stub = Kernel::NewStub(I->Channel);
  return std::unique_ptr<KernelClient>(new KernelClient(std::move(I)));
}

std::string KernelClient::call(const char *In, uint64_t Bytes, Check How, double &Seconds) {
  if (std::string Why = payloadTooLarge(Bytes); !Why.empty())
    return Why;
  Tensor Reply;
  auto Start = Clock::now();
  I->Request.set_data(In, Bytes);
  I->Request.clear_shape();
  I->Request.add_shape(int64_t(Bytes));
  grpc::ClientContext Context;
  Context.set_deadline(DeadlineClock::now() + CallDeadline);
  grpc::Status S = I->Stub->Launch(&Context, I->Request, &Reply);
  Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  if (!S.ok())
    return describe(S);
  return checkReply(Reply, In, Bytes, How);
}

std::string KernelClient::warmUp(const char *In, uint64_t Bytes, WireBytes &PerCall) {
  double Seconds;
  if (std::string Err = call(In, Bytes, Check::Everything, Seconds); !Err.empty())
    return Err;
  WireBytes Before, After;
  if (std::string Err = wireBytes(Before); !Err.empty())
    return Err;
  if (std::string Err = call(In, Bytes, Check::Ends, Seconds); !Err.empty())
    return Err;
  if (std::string Err = wireBytes(After); !Err.empty())
    return Err;
  PerCall = {After.Sent - Before.Sent, After.Received - Before.Received};
  return {};
}

std::string KernelClient::wireBytes(WireBytes &Total) const {
  return I->Sockets.count(Total);
}

} // namespace catalyst::remote::grpcbench
