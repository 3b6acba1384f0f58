#include "server/cli/error_details.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace wsched::cli {
namespace {

bool Parse(const grpc::Status& status, google::rpc::Status* out) {
  return !status.error_details().empty() && out->ParseFromString(status.error_details());
}

// Metadata sorted by key, so the line reads the same each time.
std::string MetadataText(const google::rpc::ErrorInfo& info) {
  std::map<std::string, std::string> sorted(info.metadata().begin(), info.metadata().end());
  std::vector<std::string> pairs;
  for (const auto& [key, value] : sorted) pairs.push_back(absl::StrCat(key, "=", value));
  return absl::StrJoin(pairs, " ");
}

void Append(const google::protobuf::Any& any, std::vector<std::string>* lines) {
  if (google::rpc::ErrorInfo info; any.UnpackTo(&info)) {
    std::string figures = MetadataText(info);
    lines->push_back(absl::StrCat("reason: ", info.reason(), figures.empty() ? "" : " (",
                                  figures, figures.empty() ? "" : ")"));
  } else if (google::rpc::BadRequest bad; any.UnpackTo(&bad)) {
    for (const auto& v : bad.field_violations()) {
      lines->push_back(absl::StrCat("field ", v.field().empty() ? "-" : v.field(), ": ",
                                    v.description()));
    }
  } else if (google::rpc::QuotaFailure quota; any.UnpackTo(&quota)) {
    for (const auto& v : quota.violations()) {
      lines->push_back(absl::StrCat("quota ", v.subject(), ": ", v.description()));
    }
  } else if (google::rpc::PreconditionFailure failure; any.UnpackTo(&failure)) {
    for (const auto& v : failure.violations()) {
      lines->push_back(absl::StrCat("precondition ", v.type(), " ", v.subject(), ": ",
                                    v.description()));
    }
  } else if (google::rpc::ResourceInfo resource; any.UnpackTo(&resource)) {
    lines->push_back(absl::StrCat("resource: ", resource.resource_type(), " ",
                                  resource.resource_name()));
  } else if (google::rpc::RetryInfo retry; any.UnpackTo(&retry)) {
    absl::Duration delay = absl::Seconds(retry.retry_delay().seconds()) +
                           absl::Nanoseconds(retry.retry_delay().nanos());
    lines->push_back(absl::StrCat("retry after: ", absl::FormatDuration(delay)));
  }
}

}  // namespace

std::string ErrorReason(const grpc::Status& status) {
  google::rpc::Status rpc;
  if (!Parse(status, &rpc)) return "";
  for (const auto& any : rpc.details()) {
    if (google::rpc::ErrorInfo info; any.UnpackTo(&info)) return info.reason();
  }
  return "";
}

std::string ErrorMetadata(const grpc::Status& status, const std::string& key) {
  google::rpc::Status rpc;
  if (!Parse(status, &rpc)) return "";
  for (const auto& any : rpc.details()) {
    if (google::rpc::ErrorInfo info; any.UnpackTo(&info)) {
      auto it = info.metadata().find(key);
      return it == info.metadata().end() ? "" : it->second;
    }
  }
  return "";
}

std::vector<std::string> DetailLines(const grpc::Status& status) {
  std::vector<std::string> lines;
  google::rpc::Status rpc;
  if (!Parse(status, &rpc)) return lines;
  for (const auto& any : rpc.details()) Append(any, &lines);
  return lines;
}

}  // namespace wsched::cli
