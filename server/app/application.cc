#include "server/app/application.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/app/catalog_applier.h"
#include "server/catalog/load.h"
#include "server/log/log.h"
#include "server/scheduler/cluster_metrics.h"
#include "server/scheduler/scaling_views.h"

namespace wsched::app {

Application::Application(store::Database* db, metrics::Metrics* metrics,
                         ApplicationOptions options)
    : db_(db),
      metrics_(metrics),
      options_(std::move(options)),
      scheduler_(std::make_unique<scheduler::Scheduler>(db, metrics, options_.scheduler)),
      controller_(std::make_unique<scheduler::ScalingController>(db, scheduler_.get(), metrics,
                                                                 options_.scaling)),
      // A class or catalog write is applied to this replica before its
      // answer (read your writes).
      classes_(db, options_.catalog_rules, metrics,
               [s = scheduler_.get()] { (void)s->ReloadCatalog(); }),
      settings_(db),
      usage_(db),
      audit_(db),
      cluster_metrics_(std::make_shared<scheduler::ClusterMetrics>(scheduler_.get())) {
  scheduler_->pipeline().views().SetScalingViews(
      [c = controller_.get()] { return scheduler::ScalingViewsOf(c->Current().pools); });
}

Application::~Application() = default;

absl::StatusOr<std::unique_ptr<Application>> Application::Create(store::Database* db,
                                                                 metrics::Metrics* metrics,
                                                                 ApplicationOptions options) {
  std::unique_ptr<Application> app(new Application(db, metrics, std::move(options)));
  if (!app->options_.catalog_path.empty()) {
    if (absl::Status applied = app->ReloadCatalog(); !applied.ok()) return applied;
  }
  if (absl::Status started = app->scheduler_->Start(); !started.ok()) return started;
  if (absl::Status started = app->controller_->Start(); !started.ok()) return started;
  return app;
}

absl::Status Application::ReloadCatalog() {
  const std::string& path = options_.catalog_path;
  if (path.empty()) return absl::FailedPreconditionError("no --catalog file to reload");
  auto result = ApplyCheckedCatalog(*db_, catalog::CheckCatalogPath(path, options_.catalog_rules),
                                    false);
  metrics_->CatalogApplied(result.ok(), /*from_reload=*/true);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(path, ":\n", result.status().message()));
  }
  log::Info("catalog applied", {{"path", path}, {"changes", absl::StrCat(result->changes.size())}});
  return scheduler_->ReloadCatalog();
}

void Application::Stop() {
  controller_->Stop();  // Releases leadership at once for another replica.
  scheduler_->Stop();
}

}  // namespace wsched::app
