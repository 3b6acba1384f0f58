// One server-streaming call through the real server, read on its own
// thread into memory, for the tests of the watch streams (WatchWorkspaces,
// WatchNodes): what arrived, whether and how it ended, the newest version.
#ifndef WSCHED_TESTS_SUPPORT_STREAM_READER_H_
#define WSCHED_TESTS_SUPPORT_STREAM_READER_H_

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "tests/support/server_process.h"

namespace wsched::testing {

template <typename Service, typename Request, typename Response>
class StreamReader {
 public:
  using Stub = typename Service::Stub;
  using Method = std::unique_ptr<grpc::ClientReader<Response>> (Stub::*)(grpc::ClientContext*,
                                                                         const Request&);

  // Opens `method` with `request`; reads at once unless `reads` is false
  // (then what the server sends backs up until Read).
  StreamReader(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
               Method method, const Request& request, bool reads = true)
      : stub_(Service::NewStub(channel)) {
    Authorize(context_, token);
    reader_ = ((*stub_).*method)(&context_, request);
    if (reads) Read();
  }
  ~StreamReader() {
    context_.TryCancel();
    if (thread_.joinable()) thread_.join();
  }
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Starts reading (a reader made with reads = false has not read yet).
  void Read() {
    thread_ = std::thread([this] {
      Response message;
      while (reader_->Read(&message)) {
        std::lock_guard<std::mutex> lock(mu_);
        messages_.push_back(message);
      }
      grpc::Status status = reader_->Finish();
      std::lock_guard<std::mutex> lock(mu_);
      status_ = status;
      ended_ = true;
    });
  }

  std::vector<Response> messages() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  bool ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }
  grpc::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  // The newest version received (SYNCED, CHANGES or BOOKMARK); 0: none.
  int64_t version() {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t version = 0;
    for (const Response& m : messages_) version = std::max(version, m.version());
    return version;
  }
  // The SYNCED message's version; 0 before it came.
  int64_t SyncedAt() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Response& m : messages_) {
      if (m.kind() == Response::KIND_SYNCED) return m.version();
    }
    return 0;
  }
  bool Synced() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::any_of(messages_.begin(), messages_.end(),
                       [](const Response& m) { return m.kind() == Response::KIND_SYNCED; });
  }

 private:
  std::unique_ptr<Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<Response>> reader_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Response> messages_;
  grpc::Status status_;
  bool ended_ = false;
};

// Reads `stream` (opened with `context`) until a message meets `done`,
// then cancels the call; false when the stream ends first (its deadline).
// `last` holds the last message read.
template <typename Message, typename Done>
bool ReadUntil(grpc::ClientContext& context, grpc::ClientReader<Message>& stream, Done done,
               Message* last) {
  while (stream.Read(last)) {
    if (done(*last)) {
      context.TryCancel();
      return true;
    }
  }
  return false;
}

// The google.rpc.ErrorInfo reason of a refused call (and its metadata,
// into `metadata` when not null).
inline std::string ErrorInfoOf(const grpc::Status& status,
                               std::map<std::string, std::string>* metadata) {
  google::rpc::Status rpc;
  if (!rpc.ParseFromString(status.error_details())) return "<no google.rpc.Status>";
  for (const auto& any : rpc.details()) {
    google::rpc::ErrorInfo info;
    if (any.Is<google::rpc::ErrorInfo>() && any.UnpackTo(&info)) {
      if (metadata != nullptr) metadata->insert(info.metadata().begin(), info.metadata().end());
      return info.reason();
    }
  }
  return "<no ErrorInfo>";
}

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_STREAM_READER_H_
