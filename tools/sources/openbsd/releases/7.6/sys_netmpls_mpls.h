/* Source: Passw/SecBSD-src@569ffd723ab6b7eb5bff163849bc36705adea19b:sys/netmpls/mpls.h (OpenBSD 7.6 release-period tree via DERIVATIVE SecBSD 1.6; newvers.sh has $OpenBSD: newvers.sh,v 1.205 2024/09/17$, ost="SecBSD" osr="1.6" STATUS "") */

#define MPLSCTL_ENABLE			1
#define	MPLSCTL_DEFTTL			2
#define MPLSCTL_MAPTTL_IP		5
#define MPLSCTL_MAPTTL_IP6		6
#define MPLSCTL_MAXID			7

#define MPLSCTL_NAMES { \
	{ NULL, 0 }, \
	{ NULL, 0 }, \
	{ "ttl", CTLTYPE_INT }, \
	{ "ifq", CTLTYPE_NODE },\
	{ NULL, 0 }, \
	{ "mapttl_ip", CTLTYPE_INT }, \
	{ "mapttl_ip6", CTLTYPE_INT } \
}
