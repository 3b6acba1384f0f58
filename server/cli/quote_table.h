// wschedctl place --dry-run: the quotes of a validate_only answer as table
// rows (docs/placement.md "Quotes").
#ifndef WSCHED_SERVER_CLI_QUOTE_TABLE_H_
#define WSCHED_SERVER_CLI_QUOTE_TABLE_H_

#include <string>
#include <vector>

#include "wsched/v1/placement.pb.h"

namespace wsched::cli {

// CLASS POOL GPU WHEN NODE ESTIMATE CREDITS/MIN QUOTA-AFTER.
std::vector<std::string> QuoteHeader();
// One row: "gpu-8x gpu-big H100x8 now big-1 - 8.000 8/8", with "-" for
// what does not apply and "unlimited" for an org without a GPU quota.
std::vector<std::string> QuoteRow(const v1::PlacementQuote& quote);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_QUOTE_TABLE_H_
