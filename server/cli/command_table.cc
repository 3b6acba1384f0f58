#include "server/cli/command_table.h"

namespace wsched::cli {

const std::vector<CommandSpec>& AllCommands() {
  static const std::vector<CommandSpec> kCommands = {
      // kubectl-style verbs over the resources of server/cli/resource_names.cc.
      {"get",
       "Resources (kubectl style; RESOURCE: see below)",
       {{"get RESOURCE [NAME]", "list RESOURCE, or the one named NAME (a table "
                                "row; -o json|yaml: it all)"},
        {"get workspaces -w|--watch [--resume-version=N] [--node=N] [--pool=P] "
         "[--state=S,..] "
         "[--org=O] [--project=P] [--class=C]",
         "list, then a row per change (PLACED, STOPPED, ...) until Ctrl-C; "
         "--resume-version: "
         "only the changes after N; -o json: one line per message"},
        {"get nodes -w|--watch [--resume-version=N] [--pool=P] [--node=N]",
         "list, then a row per node change (REGISTERED, CHANGED, REMOVED) "
         "until Ctrl-C"}},
       {"pool", "node", "state", "watch", "resume_version", "org", "project",
        "class"}},
      {"describe",
       "Resources (kubectl style; RESOURCE: see below)",
       {{"describe RESOURCE NAME",
         "the full detail view of one (a node with every GPU, a workspace "
         "with its device spec)"}}},
      {"apply",
       "Resources (kubectl style; RESOURCE: see below)",
       {{"apply -f FILE [--dry-run] [--pool-versions=P=V,..]",
         "apply a catalog file atomically (= catalog apply FILE)"}},
       {"filename", "dry_run", "pool_versions"}},
      {"delete",
       "Resources (kubectl style; RESOURCE: see below)",
       {{"delete node NAME", "forget NAME; its workspaces are reported lost (= "
                             "node remove NAME)"}}},

      {"health",
       "Server",
       {{"health", "health check of the server (SERVING or not)"}}},
      {"rpcs",
       "Server",
       {{"rpcs", "list the server's services and RPCs (server reflection)"}}},

      {"catalog",
       "Catalog (admin)",
       {{"catalog validate FILE",
         "check a catalog file or directory offline; prints every error"},
        {"catalog diff FILE",
         "what applying FILE would change (server-side dry run)"},
        {"catalog apply FILE [--pool-versions=P=V,..]",
         "apply FILE atomically (all or nothing); --dry-run = diff"},
        {"catalog show", "the stored catalog as YAML"}},
       {"dry_run", "pool_versions"}},
      {"classes",
       "Catalog (admin)",
       {{"classes",
         "list workspace classes with versions (etags) (= get classes)"}}},

      {"pools",
       "Inventory",
       {{"pools", "pools: GPU model, size range, nodes by state, GPUs "
                  "held/total (= get pools)"}}},
      {"nodes",
       "Inventory",
       {{"nodes [--pool=P]",
         "nodes: state, driver state, GPUs held/total, heartbeat age "
         "(= get nodes)"}},
       {"pool"}},
      {"node",
       "Inventory",
       {{"node get NAME", "one node in full, with every GPU and its IOMMU "
                          "group (= describe node)"},
        {"node cordon NAME [--expected-version=N]",
         "no new placements on NAME; running workspaces stay"},
        {"node drain NAME [--expected-version=N]",
         "no new placements; workspaces are moved off"},
        {"node uncordon NAME [--expected-version=N]", "take placements again"},
        {"node remove NAME",
         "forget NAME; its workspaces are reported lost (= delete node)"},
        {"node rotate-credential NAME",
         "issue NAME a new node token (printed once) and void the old"},
        {"node revoke-credential NAME",
         "void NAME's node token; its agent's next call is refused"}},
       {"expected_version"}},
      {"driver-work",
       "Inventory",
       {{"driver-work",
         "pending driver installs (node, kernel, image), nodes without policy "
         "(= get driver-work)"}}},
      {"driver-report",
       "Inventory",
       {{"driver-report NODE KERNEL ok|failed [DETAIL]",
         "report an installer job's result"}}},
      {"driver",
       "Inventory",
       {{"driver rollout status [POOL]",
         "driver rollouts of GPU pools: canary, nodes waiting, in flight, "
         "failed"},
        {"driver rollout pause POOL [REASON]",
         "release no more nodes (also before a policy change)"},
        {"driver rollout resume POOL",
         "go on releasing; a failed canary is waited for again"}}},
      {"clear-gpu-health",
       "Inventory",
       {{"clear-gpu-health NODE GPU_UUID",
         "return an unhealthy GPU to service now (admin)"}}},

      {"place",
       "Workspaces (control plane)",
       {{"place ID --org=O --project=P --user=U [--class=C] [--restart] "
         "[--priority=N] [--dry-run | --quote-token=T]",
         "place (or queue) a workspace; prints node, GPUs, device spec; "
         "--dry-run: the quotes, placing nothing"}},
       {"org", "project", "user", "class", "restart", "priority", "dry_run", "quote_token"}},
      {"stop",
       "Workspaces (control plane)",
       {{"stop ID", "stop a workspace and free its GPUs"}}},
      {"workspace",
       "Workspaces (control plane)",
       {{"workspace get ID",
         "one workspace in full (= describe workspace ID)"},
        {"workspace ready ID [--at=T]",
         "report a placed workspace's first ready (its IDE answered): the first "
         "report of a placement counts, a later one changes nothing"}},
       {"at"}},
      {"workspaces",
       "Workspaces (control plane)",
       {{"workspaces [--node=N] [--pool=P] [--state=S] [-w]",
         "list workspaces (= get workspaces, --watch too)"}},
       {"node", "pool", "state", "watch", "resume_version", "org", "project",
        "class"}},
      {"watch",
       "Workspaces (control plane)",
       {{"watch ID",
         "stream a workspace's state changes (until stopped or Ctrl-C)"}}},

      {"project",
       "Class settings",
       {{"project get PROJECT",
         "a project's default class and denied classes (= get project)"},
        {"project set-default PROJECT --org=O CLASS "
         "[--expected-version=N|--force]",
         "set the project's default class (\"\" clears it)"}},
       {"org", "expected_version", "force"}},
      {"org",
       "Class settings",
       {{"org get ORG",
         "an org's default class, allow-list and GPU quota (= get org)"},
        {"org set ORG [--default=C] [--allow=a,b] [--gpu-quota=N] "
         "[--expected-version=N|--force]",
         "change only the given settings (-1 = unlimited GPUs)"}},
       {"default", "allow", "gpu_quota", "expected_version", "force"}},
      {"resolve",
       "Class settings",
       {{"resolve --org=O --project=P [--class=C] [--previous=C]",
         "which class a new workspace would get, and why"}},
       {"org", "project", "class", "previous"}},

      {"scaling",
       "Scaling",
       {{"scaling",
         "per pool: current -> target size, reasons, nodes to remove"},
        {"scaling watch [POOL...]", "stream the scaling signals"}}},
      {"simulate",
       "Scaling",
       {{"simulate --catalog=FILE --trace=FILE [--timings=FILE] "
         "[--node-start=D] "
         "[--driver-install=D] [--set=K=V ..] [--variant=NAME:K=V,.. ..] "
         "[--long-wait=5m] "
         "[--chart=out.svg]",
         "replay a trace through the scheduler's placement and scaling code "
         "offline: cost and "
         "waits per variant and pool"},
        {"simulate trace [--workspaces=N] [--days=N] [--seed=N] [--start=TIME] "
         "[--mix=C=W,..] [--burst-class=C]",
         "a synthetic trace (office hours with bursts) as CSV on stdout"}},
       {"catalog", "trace", "timings", "node_start", "driver_install", "set",
        "variant", "long_wait", "chart", "workspaces", "days", "seed", "start",
        "mix", "burst_class"},
       /*remote=*/false},

      {"audit",
       "Audit",
       {{"audit [--principal=P] [--object=O] [--since=D]",
         "who changed what, newest first: time, principal, method, object, "
         "outcome"}},
       {"principal", "object", "since"}},

      {"usage",
       "Usage and billing",
       {{"usage list [--org=O] [--project=P] [--class=C] [--since=T] "
         "[--until=T]",
         "placements overlapping the range, clipped to it: GPUs, start, end, "
         "why it ended"},
        {"usage summary --since=T --until=T [--group-by=org,project,class] "
         "[--bucket=day] "
         "[--time-zone=Europe/Berlin]",
         "GPU, CPU and memory seconds per bucket and group; -o csv is the "
         "billing export"},
        {"usage limits --org=O [--project=P]",
         "the org's (and the project's) spending limit: GPU-hours per period, "
         "action, warning thresholds"},
        {"usage forecast --org=O [--project=P] [--time-zone=Z]",
         "spent this period, running GPUs, the last hour's rate and when the "
         "limit is reached at it"}},
       {"org", "project", "class", "since", "until", "group_by", "bucket",
        "time_zone"},
       /*remote=*/true,
       /*csv=*/true},

      {"token",
       "Tokens (local, no server)",
       {{"token create --role=R [--name=N] [--orgs=..] [--projects=..] "
         "[--pools=..] [--node=N | --bootstrap]",
         "a new random token (line 1) and its sha256 entry for the tokens file "
         "(line 2); an agent "
         "token names its node or is a pool's bootstrap token"},
        {"token hash --role=R [--name=N] [scopes] < FILE",
         "the sha256 entry for an existing token read from stdin"}},
       {"role", "name", "orgs", "projects", "pools", "node", "bootstrap"},
       /*remote=*/false},

      {"help",
       "This tool",
       {{"help [COMMAND]",
         "this text, or the usage of COMMAND (also: COMMAND --help)"}},
       {},
       /*remote=*/false},
      {"version",
       "This tool",
       {{"version",
         "the client's version and build; the server's where it tells"}},
       {},
       /*remote=*/false},
      {"completion",
       "This tool",
       {{"completion bash|zsh",
         "a shell completion script: source <(wschedctl completion bash)"}},
       {},
       /*remote=*/false},
  };
  return kCommands;
}

const CommandSpec* FindCommand(std::string_view name) {
  for (const CommandSpec& command : AllCommands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

}  // namespace wsched::cli
