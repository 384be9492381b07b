// The machine parameters of the model: what messages, migrations, yields and policy decisions
// cost on this machine and runtime. `prema-model --calibrate FILE` measures them; the file is
// plain text, one `key = value` (seconds) per line, `#` starts a comment.
#pragma once

#include <iosfwd>
#include <string>

namespace prema::model {

struct machine {
    double startup_s = 0;    // fixed cost of one message (half a round trip of a tiny one)
    double per_byte_s = 0;   // added per payload byte
    double migrate_s = 0;    // one object migration (uninstall, pack, send, unpack, install)
                             // of an object with an empty body; per_byte_s adds its size
    double poll_s = 0;       // one yield point that suspends: requeue and resume (T_poll+2T_ctx)
    double decision_s = 0;   // a policy serving one request (work map, choice)
    double quiescence_s = 0; // detecting global quiescence at the end of a phase

    double message_s(double bytes) const { return startup_s + per_byte_s * bytes; }
};

// Throws usage_error naming the line of a bad, unknown, repeated or missing key.
machine read_machine(std::istream& in, const std::string& what);
void write_machine(std::ostream& out, const machine& m, const std::string& comment);

} // namespace prema::model
