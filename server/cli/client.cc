#include "server/cli/client.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace wsched::cli {

std::unique_ptr<grpc::ClientContext> Client::Context(int timeout_seconds) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(timeout_seconds));
  return context;
}

std::string Describe(const grpc::Status& status) {
  return absl::StrCat("[code ", static_cast<int>(status.error_code()), "] ", status.error_message());
}

}  // namespace wsched::cli
