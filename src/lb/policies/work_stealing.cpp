// Work stealing: an idle rank asks a victim picked at random for work; the victim grants half
// of its spare objects, at most steal_batch() (requester.hpp). After a few refusals in a row
// the thief pauses, for longer with each further refusal (PREMA's optimisation of diffusion
// without the load-gathering phase).
#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"

namespace prema::detail {

namespace {
class work_stealing final : public requester {
    void dist_balance() override {
        if (hungry())
            ask(random_other(), steal_batch());
    }
};
} // namespace

std::unique_ptr<lb::scheduler> make_work_stealing() {
    return std::make_unique<work_stealing>();
}

} // namespace prema::detail
