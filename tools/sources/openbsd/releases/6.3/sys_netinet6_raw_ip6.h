/* Source: netzbasis/openbsd-src@bda9423adea36d456667626b097beded37e4751a:sys/netinet6/raw_ip6.h (OpenBSD 6.3) */

#define RIPV6CTL_STATS		1	/* RIP6 stats */
#define RIPV6CTL_MAXID		2

#define RIPM6CTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_NODE }, \
}
