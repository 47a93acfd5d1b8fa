/* Source: netzbasis/openbsd-src@44b1c1ee8edd20e8f91ee5783670d9841a76b69b:sys/netinet/ip_ipcomp.h (OpenBSD 6.6) */

#define IPCOMPCTL_ENABLE	1	/* Enable COMP processing */
#define IPCOMPCTL_STATS		2	/* COMP stats */
#define IPCOMPCTL_MAXID		3

#define IPCOMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
