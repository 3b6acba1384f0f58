// Who a caller is once authenticated: its roles and, for scoped roles, the
// orgs/projects/pools it covers.
#ifndef WSCHED_SERVER_GRPC_PRINCIPAL_H_
#define WSCHED_SERVER_GRPC_PRINCIPAL_H_

#include <set>
#include <string>

#include "absl/status/statusor.h"

namespace wsched::grpc_api {

enum class Role { kAdmin, kControlPlane, kProjectOwner, kAgent, kActuator };

inline constexpr Role kAllRoles[] = {Role::kAdmin, Role::kControlPlane, Role::kProjectOwner,
                                     Role::kAgent, Role::kActuator};

const char* RoleName(Role role);
// "admin", "control-plane", ...; InvalidArgument naming the allowed names.
absl::StatusOr<Role> ParseRole(const std::string& text);

struct Principal {
  // For logs and errors, and the key of per-caller limits: the tokens-file
  // entry, plus the certificate identity when a wildcard entry matched
  // ("h100-nodes/node-7.gpu.example"), so every node counts on its own.
  std::string name;
  // Which of the entry's credentials this call presented, for the audit
  // trail: "token sha256:<first 12 hex digits>" or "certificate <identity>".
  std::string credential;
  std::set<Role> roles;
  // Scopes of project-owner and agent roles; empty = the role is unscoped.
  std::set<std::string> orgs;
  std::set<std::string> projects;
  std::set<std::string> pools;
  // Node identity (docs/security.md): the one node an agent credential
  // speaks for ("" when it is not bound to a node), and whether it is a
  // pool's bootstrap credential, which may only register a node that does
  // not exist yet.
  std::string node;
  bool bootstrap = false;

  bool Has(Role role) const { return roles.count(role) > 0; }
  // Project owners reach only their own projects/orgs; other roles all.
  bool CoversProject(const std::string& org_id, const std::string& project_id) const;
  bool CoversOrg(const std::string& org_id) const;
  bool CoversPool(const std::string& pool) const;
  // May report for, and read, node `name`: admins any node; a node-bound
  // credential only its own; a shared pool credential (only with
  // --allow_shared_agent_credentials) any node (its pool is checked apart);
  // a bootstrap credential none (it registers new nodes, nothing else).
  bool SpeaksForNode(const std::string& name) const;
  // Agents and project owners are many, outside the operator's hands, and
  // not on the placement hot path: their concurrent calls are capped so one
  // misbehaving caller cannot take every server thread.
  bool ConcurrencyLimited() const;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_PRINCIPAL_H_
