/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/netinet/ip_ah.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define	AHCTL_ENABLE	1		/* Enable AH processing */
#define	AHCTL_STATS	2		/* AH stats */
#define	AHCTL_MAXID	3

#define AHCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT } \
}
