#include "server/cli/command_table.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/cli/completion.h"
#include "server/cli/dispatch.h"
#include "server/cli/flag_table.h"
#include "server/cli/help_text.h"
#include "server/cli/resource_names.h"

namespace wsched::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CommandTable, EveryCommandHasAHandlerAndEveryHandlerACommand) {
  for (const CommandSpec& command : AllCommands()) {
    EXPECT_NE(FindHandler(command.name), nullptr) << command.name;
  }
  for (std::string_view name : HandledCommands()) EXPECT_NE(FindCommand(name), nullptr) << name;
}

TEST(CommandTable, CommandFlagsExist) {
  for (const CommandSpec& command : AllCommands()) {
    for (std::string_view flag : command.flags) {
      EXPECT_NE(FindFlag(flag), nullptr) << command.name << " --" << flag;
    }
  }
}

TEST(CommandTable, GlobalHelpListsEveryUsageLineByGroup) {
  std::string help = GlobalUsage();
  for (const CommandSpec& command : AllCommands()) {
    EXPECT_THAT(help, HasSubstr(std::string(command.group) + ":\n"));
    for (const UsageLine& line : command.usage) EXPECT_THAT(help, HasSubstr(line.synopsis));
  }
  EXPECT_THAT(help, HasSubstr("WSCHED_TOKEN_FILE"));
  EXPECT_THAT(help, HasSubstr("Exit status:"));
}

TEST(CommandTable, CommandHelpHasItsOwnFlagsOnly) {
  std::string place = CommandUsage(*FindCommand("place"));
  EXPECT_THAT(place, HasSubstr("wschedctl place ID"));
  EXPECT_THAT(place, HasSubstr("--priority=N"));
  EXPECT_THAT(place, Not(HasSubstr("--gpu-quota")));
  EXPECT_THAT(place, HasSubstr("--timeout=D"));  // the global flags too
  EXPECT_THAT(CommandUsage(*FindCommand("get")), HasSubstr("workspaces"));
}

TEST(Resources, SingularPluralAndShortNamesFindTheSameResource) {
  for (const char* name : {"node", "nodes", "no"}) {
    ASSERT_NE(FindResource(name), nullptr) << name;
    EXPECT_EQ(FindResource(name)->resource, Resource::kNodes);
  }
  for (const char* name : {"workspace", "workspaces", "ws"}) {
    EXPECT_EQ(FindResource(name)->resource, Resource::kWorkspaces) << name;
  }
  EXPECT_EQ(FindResource("class")->resource, Resource::kClasses);
  EXPECT_EQ(FindResource("pool")->resource, Resource::kPools);
  EXPECT_EQ(FindResource("nodez"), nullptr);
}

TEST(Completion, BashScriptNamesCommandsResourcesAndFlags) {
  std::string script = *CompletionScript("bash");
  for (const CommandSpec& command : AllCommands()) {
    EXPECT_THAT(script, HasSubstr(std::string(command.name))) << command.name;
  }
  EXPECT_THAT(script, HasSubstr("workspaces"));
  EXPECT_THAT(script, HasSubstr("--dry-run"));
  EXPECT_THAT(script, HasSubstr("--output="));
  EXPECT_THAT(script, HasSubstr("node) words=\"get cordon drain uncordon remove rotate-credential revoke-credential\""));
  EXPECT_THAT(script, HasSubstr("complete -F _wschedctl wschedctl"));
  EXPECT_THAT(*CompletionScript("zsh"), HasSubstr("#compdef wschedctl"));
  EXPECT_FALSE(CompletionScript("fish").ok());
}

}  // namespace
}  // namespace wsched::cli
