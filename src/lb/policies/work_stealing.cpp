// Work stealing: an idle rank asks one victim for an object; after a refusal it asks another,
// visiting the other ranks in a random order (PREMA's optimisation of diffusion without the
// load-gathering phase).
#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"

namespace prema::detail {

namespace {
class work_stealing final : public requester {
    void dist_balance() override {
        if (hungry())
            ask(next_victim());
    }
};
} // namespace

std::unique_ptr<lb::scheduler> make_work_stealing() {
    return std::make_unique<work_stealing>();
}

} // namespace prema::detail
