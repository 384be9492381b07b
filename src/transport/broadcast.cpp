// Broadcast relay: the message carries [root, inner handler id, inner payload]. Each rank
// forwards it to its children in the tree over the ranks counted from `root` (relative rank
// (rank - root) mod P; prema/detail/transport/tree.hpp), then runs the inner handler as if `root`
// had sent it.
#include "prema/transport/broadcast.hpp"

#include "prema/detail/transport/tree.hpp"
#include "transport/transport_state.hpp"
#include "transport/wire_check.hpp"

namespace prema::detail {

namespace {

std::uint64_t relay_id();

void post_relay(int dest, std::int32_t root, std::uint64_t inner, std::span<const std::byte> body) {
    post_new(dest, relay_id(), 0, [&](byte_writer& w) {
        w.write(&root, sizeof root);
        w.write(&inner, sizeof inner);
        w.write(body.data(), body.size());
    });
}

void on_relay(const incoming& in) {
    auto& st = state();
    auto parts = decode_relay(in.payload, st.size);
    std::int32_t root = parts.root;
    std::uint64_t inner = parts.inner;
    auto body = parts.body;
    const auto relative = std::size_t((st.rank - root + st.size) % st.size);
    for (const tree_run& child : tree_place(relative, std::size_t(st.size)).children())
        post_relay(int((child.begin + std::size_t(root)) % std::size_t(st.size)), root, inner,
                   body);
    if (auto* e = find_handler(inner))
        e->invoke(incoming{root, 0, body});
    else
        throw wire_error("broadcast for unknown handler id " + std::to_string(inner));
}

const std::uint64_t relay = register_handler("prema::broadcast", &on_relay);
std::uint64_t relay_id() {
    return relay;
}

} // namespace

relay_parts decode_relay(std::span<const std::byte> payload, int ranks) {
    byte_reader r(payload);
    relay_parts p;
    r.read(&p.root, sizeof p.root);
    r.read(&p.inner, sizeof p.inner);
    if (p.root < 0 || p.root >= ranks)
        throw wire_error("broadcast relay names root rank " + std::to_string(p.root));
    p.body = r.rest();
    return p;
}

void start_broadcast(std::uint64_t inner, byte_writer& payload) {
    auto& st = state();
    post_relay(st.rank, st.rank, inner, payload.heap());
}

} // namespace prema::detail
