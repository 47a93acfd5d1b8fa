/* Source: netzbasis/openbsd-src@89b1ea33cb8518112f9142507d0680181a3b5531:sys/netinet/ip_ipcomp.h (OpenBSD 6.8-current) */

#define IPCOMPCTL_ENABLE	1	/* Enable COMP processing */
#define IPCOMPCTL_STATS		2	/* COMP stats */
#define IPCOMPCTL_MAXID		3

#define IPCOMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
