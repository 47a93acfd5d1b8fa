"""DUT firewall profiles rendered as nftables rulesets (pure text, loaded with `nft -f -`).

The profiles mirror what pf users compare in the articles:
- none      no ruleset at all, like pf `set skip on em1`: packets never meet the filter.
- stateful  conntrack; established/related accepted first, then one pass rule for the test traffic,
            like pf `pass in quick on em1 ... keep state`.
- rules:N   stateful, with N non-matching rules before the pass rule. As with pf, only a flow's first
            packet walks the list; established packets match the conntrack rule first — so the cost
            of N rules shows in connection set-up, not in bulk throughput.
- rules-stateless:N  no conntrack: every packet, in both directions, walks the N rules before the
            pass rules (pf `pass ... no state`, a Linux ACL). This is the profile that shows what
            rule count costs per packet.
- nat       stateful plus masquerade on the server-side (WAN) interface.
The non-matching rules alternate IPv4 and IPv6 sources, from parts of the benchmarking ranges no
lab host uses (198.18.128.0/17 and 2001:2:0:ff::/64), so both families pay for the list.
"""

from __future__ import annotations

from linerate.model import FirewallProfile

TABLE = "linerate"


def _filler_rule(index: int, lan_if: str, port: int) -> str:
    slot = index // 2
    if index % 2 == 0:
        third, fourth = 128 + slot // 256, slot % 256
        return f'        iifname "{lan_if}" ip saddr 198.18.{third}.{fourth} tcp dport {port} accept'
    return f'        iifname "{lan_if}" ip6 saddr 2001:2:0:ff::{slot + 1:x} tcp dport {port} accept'


def render_ruleset(profile: FirewallProfile, lan_if: str, wan_if: str, port: int,
                   http_port: int | None = None) -> str | None:
    """Return the nft script for a profile, or None for `none` (nothing is loaded). The pass rule
    lets the test port through (iperf3, rfc2544's frames) and, given, the HTTP port (cps: nginx)."""
    if profile.kind == "none":
        return None
    stateless = profile.kind == "rules-stateless"
    lines = [
        f"table inet {TABLE} {{",
        "    chain forward {",
        "        type filter hook forward priority filter; policy drop;",
    ]
    if not stateless:
        lines += ["        ct state established,related accept", "        ct state invalid drop"]
    lines += [_filler_rule(i, lan_if, port) for i in range(profile.n_rules)]
    ports = f"{{ {port}, {http_port} }}" if http_port else str(port)
    lines.append(f'        iifname "{lan_if}" oifname "{wan_if}" meta l4proto {{ tcp, udp }} th dport {ports} accept')
    if stateless:  # no state: the replies need a rule of their own
        lines += [f'        iifname "{wan_if}" oifname "{lan_if}" meta l4proto {{ tcp, udp }} th sport {ports} accept',
                  '        meta l4proto { icmp, ipv6-icmp } accept']
    else:
        lines.append(f'        iifname "{lan_if}" oifname "{wan_if}" meta l4proto {{ icmp, ipv6-icmp }} accept')
    lines.append("    }")
    if profile.kind == "nat":
        lines += [
            "    chain postrouting {",
            "        type nat hook postrouting priority srcnat; policy accept;",
            f'        oifname "{wan_if}" masquerade',
            "    }",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"
