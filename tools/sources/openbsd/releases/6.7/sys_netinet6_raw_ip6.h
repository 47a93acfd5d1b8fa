/* Source: netzbasis/openbsd-src@15c0878c67d873267e45e4d4c5d3c1aef5537271:sys/netinet6/raw_ip6.h (OpenBSD 6.7) */

#define RIPV6CTL_STATS		1	/* RIP6 stats */
#define RIPV6CTL_MAXID		2

#define RIPM6CTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_NODE }, \
}
