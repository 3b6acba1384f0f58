// Which measured install time the next node's estimate uses (no database).
#ifndef WSCHED_SERVER_STORE_TIMING_FIGURES_H_
#define WSCHED_SERVER_STORE_TIMING_FIGURES_H_

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "server/store/types.h"

namespace wsched::store {

// TimingFigures::driver_install from TimingFigures::driver_install_by_cache:
// per (pool, kernel), the hit figure, else the one of reports that do not
// say, else the miss figure (types.h says why).
std::map<std::pair<std::string, std::string>, TimingFigure> FiguresForTheNextInstall(
    const std::map<std::tuple<std::string, std::string, core::DriverCache>, TimingFigure>&
        by_cache);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_TIMING_FIGURES_H_
