// wschedctl audit: the audit trail (AuditService.ListAuditRecords).
#ifndef WSCHED_SERVER_CLI_AUDIT_COMMAND_H_
#define WSCHED_SERVER_CLI_AUDIT_COMMAND_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// Every page, newest first, filtered by --principal, --object and --since.
int AuditCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_AUDIT_COMMAND_H_
