// Connection settings shared by every wschedctl command.
#ifndef WSCHED_SERVER_CLI_CLIENT_H_
#define WSCHED_SERVER_CLI_CLIENT_H_

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"

namespace wsched::cli {

struct Client {
  std::shared_ptr<grpc::Channel> channel;
  std::string token;  // Bearer token; empty = none.
  // --timeout: the deadline of each unary call (and each page of a list).
  absl::Duration timeout = absl::Seconds(30);

  // A context with the token and the --timeout deadline.
  std::unique_ptr<grpc::ClientContext> Context() const;
  // A context with the token and no deadline, for watch streams.
  std::unique_ptr<grpc::ClientContext> StreamContext() const;
};

// "UNAUTHENTICATED" for grpc::StatusCode::UNAUTHENTICATED.
const char* CodeName(grpc::StatusCode code);

// "[code N NAME] message" for a failed call.
std::string Describe(const grpc::Status& status);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_CLIENT_H_
