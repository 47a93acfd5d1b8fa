/* Source: netzbasis/openbsd-src@8030d7a93fa9d4cae20487395c7e1c7126b8a954:sys/netinet/ip_ipcomp.h (OpenBSD 6.0) */

#define IPCOMPCTL_ENABLE	1	/* Enable COMP processing */
#define IPCOMPCTL_STATS		2	/* COMP stats */
#define IPCOMPCTL_MAXID		3

#define IPCOMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
