// Lists for the user: every page of a List RPC, merged into one response.
#ifndef WSCHED_SERVER_CLI_ALL_PAGES_H_
#define WSCHED_SERVER_CLI_ALL_PAGES_H_

#include <string>

#include <grpcpp/grpcpp.h>

#include "server/cli/client.h"

namespace wsched::cli {

// The largest page the server gives: fewest round trips.
inline constexpr int kCliPageSize = 1000;

// Calls `call(context, request, page)` until the server says there is no
// next page; repeated fields of the pages are appended into `all`.
template <typename Request, typename Response, typename Call>
grpc::Status ListAllPages(const Client& client, Request request, Response* all, Call call) {
  request.set_page_size(kCliPageSize);
  do {
    Response page;
    auto context = client.Context();
    grpc::Status status = call(context.get(), request, &page);
    if (!status.ok()) return status;
    request.set_page_token(page.next_page_token());
    page.clear_next_page_token();
    all->MergeFrom(page);
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_ALL_PAGES_H_
