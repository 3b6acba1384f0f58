// Who may call what. Callers present a bearer token that maps to a role
// (and, for scoped roles, the orgs/projects/pools it covers). One table,
// kMethodRoles in auth.cc, lists every RPC with the roles allowed to call
// it; the server refuses to start if any served RPC lacks an entry.
#ifndef WSCHED_SERVER_GRPC_AUTH_H_
#define WSCHED_SERVER_GRPC_AUTH_H_

#include <set>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace wsched::grpc_api {

enum class Role { kAdmin, kControlPlane, kProjectOwner, kAgent, kActuator };

struct Principal {
  std::string name;  // For logs.
  std::set<Role> roles;
  // Scopes of project-owner and agent roles; empty = the role is unscoped.
  std::set<std::string> orgs;
  std::set<std::string> projects;
  std::set<std::string> pools;

  bool Has(Role role) const { return roles.count(role) > 0; }
  // Project owners reach only their own projects/orgs; other roles all.
  bool CoversProject(const std::string& org_id, const std::string& project_id) const;
  bool CoversOrg(const std::string& org_id) const;
  bool CoversPool(const std::string& pool) const;
};

class Authenticator {
 public:
  // Loads tokens from YAML:
  //   tokens:
  //     - {name: ops, token: "...", role: admin}
  //     - {name: p42-owner, token: "...", role: project-owner, orgs: [o-1], projects: [p-42]}
  //     - {name: agent-h100, token: "...", role: agent, pools: [gpu-h100]}
  static absl::StatusOr<Authenticator> FromYamlFile(const std::string& path);
  static absl::StatusOr<Authenticator> FromYaml(const std::string& text);
  // Development only: every caller is an unscoped admin + control-plane.
  static Authenticator AllowAll();

  // Authenticates the call and checks the method table. UNAUTHENTICATED
  // without a known token; PERMISSION_DENIED when no role of the caller may
  // call `method` ("/wsched.v1.ClassService/ApplyCatalog").
  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase& context,
                                      const std::string& method) const;

 private:
  bool allow_all_ = false;
  absl::flat_hash_map<std::string, Principal> by_token_;
};

// The roles allowed to call `method`; NOT_FOUND for an RPC without a decision.
absl::StatusOr<std::vector<Role>> RolesForMethod(const std::string& method);

// Every method of the given services has an entry; lists the missing ones.
absl::Status CheckMethodTableCovers(const std::vector<std::string>& service_names);

const char* RoleName(Role role);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_AUTH_H_
