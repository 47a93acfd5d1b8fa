/* Source: netzbasis/openbsd-src@4e6ac999902cada19196d97d1183f40ec7281558:sys/netmpls/mpls.h (OpenBSD 6.1) */

#define MPLSCTL_ENABLE			1
#define	MPLSCTL_DEFTTL			2
#define	MPLSCTL_MAXINKLOOP		4
#define MPLSCTL_MAPTTL_IP		5
#define MPLSCTL_MAPTTL_IP6		6
#define MPLSCTL_MAXID			7	

#define MPLSCTL_NAMES { \
	{ NULL, 0 }, \
	{ NULL, 0 }, \
	{ "ttl", CTLTYPE_INT }, \
	{ "ifq", CTLTYPE_NODE },\
	{ "maxloop_inkernel", CTLTYPE_INT }, \
	{ "mapttl_ip", CTLTYPE_INT }, \
	{ "mapttl_ip6", CTLTYPE_INT } \
}
