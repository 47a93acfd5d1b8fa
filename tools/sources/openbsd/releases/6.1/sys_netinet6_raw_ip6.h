/* Source: netzbasis/openbsd-src@4e6ac999902cada19196d97d1183f40ec7281558:sys/netinet6/raw_ip6.h (OpenBSD 6.1) */

#define RIPV6CTL_STATS		1	/* RIP6 stats */
#define RIPV6CTL_MAXID		2

#define RIPM6CTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_NODE }, \
}
