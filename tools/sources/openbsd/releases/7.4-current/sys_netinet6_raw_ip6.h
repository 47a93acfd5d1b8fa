/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/netinet6/raw_ip6.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define RIPV6CTL_STATS		1	/* RIP6 stats */
#define RIPV6CTL_MAXID		2

#define RIPM6CTL_NAMES { \
	{ 0, 0 }, \
	{ "stats", CTLTYPE_NODE }, \
}
