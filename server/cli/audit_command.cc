#include "server/cli/audit_command.h"

#include <iostream>

#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "server/cli/output.h"
#include "server/cli/all_pages.h"
#include "server/cli/structured_output.h"
#include "wsched/v1/audit.grpc.pb.h"

namespace wsched::cli {
namespace {

// "node_name=n-1,expected_version=3", or "-".
std::string Fields(const v1::AuditRecord& record) {
  std::map<std::string, std::string> sorted(record.fields().begin(), record.fields().end());
  std::vector<std::string> parts;
  for (const auto& [key, value] : sorted) parts.push_back(absl::StrCat(key, "=", value));
  return parts.empty() ? "-" : Join(parts, ",");
}

}  // namespace

int AuditCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  if (!args.empty()) {
    std::cerr << "usage: wschedctl audit [--principal=P] [--object=O] [--since=D]\n";
    return 2;
  }
  if (!options.since_text.empty() && !options.since) {
    std::cerr << "--since must be a positive duration such as 1h or 30m, not \""
              << options.since_text << "\"\n";
    return 2;
  }
  auto stub = v1::AuditService::NewStub(client.channel);
  v1::ListAuditRecordsRequest request;
  request.set_principal(options.principal);
  request.set_object(options.object);
  if (options.since) {
    *request.mutable_start_time() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
        absl::ToUnixMicros(absl::Now() - *options.since));
  }
  v1::ListAuditRecordsResponse response;
  grpc::Status status = ListAllPages(
      client, request, &response,
      [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
        return stub->ListAuditRecords(context, page_request, page);
      });
  if (!status.ok()) return Fail("audit", status);
  if (options.structured()) return PrintStructured(response, options);
  std::vector<std::string> header = {"TIME", "PRINCIPAL", "METHOD", "OBJECT", "CODE"};
  if (options.wide()) header.insert(header.end(), {"CREDENTIAL", "FIELDS", "MESSAGE"});
  Table table(header);
  for (const auto& record : response.records()) {
    std::string method = record.method();
    if (auto slash = method.rfind('/'); slash != std::string::npos) method = method.substr(slash + 1);
    std::vector<std::string> row = {TimeText(record.time()), record.principal(), method,
                                    OrDash(record.object()), record.code()};
    if (options.wide()) {
      row.insert(row.end(), {record.credential(), Fields(record), OrDash(record.message())});
    }
    table.Add(std::move(row));
  }
  table.Print("no audit records", !options.no_headers);
  return 0;
}

}  // namespace wsched::cli
