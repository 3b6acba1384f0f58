#include "server/watch/filter.h"

#include <algorithm>

namespace wsched::watch {
namespace {

bool Narrows(const std::string& wanted, const std::string& value) {
  return wanted.empty() || wanted == value;
}

bool Contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool InScope(const Filter& filter, const Facts& facts) {
  if (!filter.scope_orgs && !filter.scope_projects) return true;
  return (filter.scope_orgs && Contains(*filter.scope_orgs, facts.org_id)) ||
         (filter.scope_projects && Contains(*filter.scope_projects, facts.project_id));
}

}  // namespace

Facts FactsOf(const core::Workspace& w) {
  return {w.state, w.org_id, w.project_id, w.class_id, w.pool, w.node_name};
}

bool Selects(const Filter& filter, const Facts& facts) {
  if (!facts.state) return false;
  return Narrows(filter.org_id, facts.org_id) && Narrows(filter.project_id, facts.project_id) &&
         Narrows(filter.class_id, facts.class_id) && Narrows(filter.pool, facts.pool) &&
         Narrows(filter.node, facts.node) &&
         (filter.states.empty() || filter.states.count(*facts.state) > 0) && InScope(filter, facts);
}

}  // namespace wsched::watch
