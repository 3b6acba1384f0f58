// Which workspaces a WatchWorkspaces stream follows, and whether a
// workspace, as the facts of one moment describe it, is among them
// (docs/api.md "Following every workspace"). Pure.
#ifndef WSCHED_SERVER_WATCH_FILTER_H_
#define WSCHED_SERVER_WATCH_FILTER_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/core/workspace.h"

namespace wsched::watch {

// What a filter selects on, of one workspace at one moment.
struct Facts {
  std::optional<core::WorkspaceState> state;  // nullopt: it does not exist (yet, or any more).
  std::string org_id;
  std::string project_id;
  std::string class_id;
  std::string pool;
  std::string node;
};

Facts FactsOf(const core::Workspace& w);

struct Filter {
  // Each set field narrows; empty = any.
  std::string org_id;
  std::string project_id;
  std::string class_id;
  std::string pool;
  std::string node;
  // Empty = every state.
  std::set<core::WorkspaceState> states;
  // A project owner's reach: only workspaces of these orgs or projects.
  // nullopt = unscoped (admin, control plane, a node's agent).
  std::optional<std::vector<std::string>> scope_orgs;
  std::optional<std::vector<std::string>> scope_projects;
};

// The workspace described by `facts` is one `filter` follows.
bool Selects(const Filter& filter, const Facts& facts);

}  // namespace wsched::watch

#endif  // WSCHED_SERVER_WATCH_FILTER_H_
