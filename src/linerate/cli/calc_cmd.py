"""`linerate calc`: theoretical goodput, frames/s and per-frame overhead for a link."""

from __future__ import annotations

import argparse
from linerate.calc import ENCAPSULATIONS, LinkInput, frame_rate, goodput, parse_rate, rfc2544_table
from linerate.errors import ConfigError
from linerate.schema import dumps


def rate_type(text: str) -> float:
    try:
        return parse_rate(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    calc = sub.add_parser("calc", help="theoretical line rate: goodput, frames/s, overhead per frame",
                          description="Example: linerate calc --link 1g --mtu 1500 --family 6 --json")
    calc.add_argument("--link", type=rate_type, default=1e9, help="link rate: 100m, 1g, 2.5g, 10g or bit/s (default 1g)")
    calc.add_argument("--mtu", type=int, default=1500, help="IP MTU of the link (default 1500)")
    calc.add_argument("--family", type=int, choices=(4, 6), default=4, help="IP family (default 4)")
    calc.add_argument("--no-timestamps", action="store_true", help="TCP without the timestamp option")
    calc.add_argument("--protocol", choices=("tcp", "udp"), default="tcp")
    calc.add_argument("--vlan", type=int, choices=(0, 1, 2), default=0, help="802.1Q tags (default 0)")
    calc.add_argument("--encap", choices=sorted(ENCAPSULATIONS), default="none", help="tunnel encapsulation")
    calc.add_argument("--frame-size", type=int, help="RFC 2544 view for one Ethernet frame size (bytes)")
    calc.add_argument("--rfc2544", action="store_true", help="table for 64..1518 and 9018-byte frames")
    calc.add_argument("--json", action="store_true", help="numbers in bit/s and frames/s as JSON")
    calc.set_defaults(handler=cmd_calc)


def cmd_calc(args: argparse.Namespace) -> int:
    if args.frame_size is not None and not 64 <= args.frame_size <= 16384:
        raise ConfigError("--frame-size", f"{args.frame_size} is not an Ethernet frame size; give 64 to 16384 bytes")
    if args.rfc2544 or args.frame_size is not None:
        try:
            rows = rfc2544_table(args.link) if args.rfc2544 else [frame_rate(args.link, args.frame_size)]
        except ValueError as exc:
            raise ConfigError("--frame-size", str(exc)) from None
        if args.json:
            print(dumps({"frames": [row.__dict__ for row in rows]}))
        else:
            print(f"{'frame bytes':>11}  {'frames/s':>14}  {'frame Mbit/s':>13}  {'wire bytes':>10}")
            for row in rows:
                print(f"{row.frame_bytes:>11}  {row.frames_per_s:>14,.0f}  {row.frame_bps / 1e6:>13,.2f}  "
                      f"{row.wire_bytes:>10}")
        return 0
    try:
        result = goodput(LinkInput(args.link, args.mtu, args.family, not args.no_timestamps, args.protocol,
                                   args.vlan, args.encap))
    except ValueError as exc:
        raise ConfigError("--mtu" if "MTU" in str(exc) or "mtu" in str(exc) else "calc", str(exc)) from None
    if args.json:
        print(dumps(result.to_dict()))
        return 0
    print(f"link {args.link / 1e6:,.0f} Mbit/s, MTU {args.mtu}, IPv{args.family} {args.protocol.upper()}"
          f"{'' if args.protocol == 'udp' else (' with' if not args.no_timestamps else ' without') + ' timestamps'}"
          f", {args.vlan} VLAN tag(s), encapsulation {args.encap}")
    print(f"max goodput  {result.goodput_bps / 1e6:,.2f} Mbit/s = {result.megabytes_per_s:,.2f} MB/s "
          f"= {result.mebibytes_per_s:,.2f} MiB/s")
    print(f"frames/s     {result.frames_per_s:,.0f}")
    print(f"per frame    {result.payload_bytes} payload bytes of {result.wire_bytes} on the wire "
          f"({result.efficiency * 100:.2f}% efficiency)")
    print("overhead     " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in result.overhead.items() if v))
    return 0
