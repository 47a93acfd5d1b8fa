/* Source: netzbasis/openbsd-src@15c0878c67d873267e45e4d4c5d3c1aef5537271:sys/netinet/ip_esp.h (OpenBSD 6.7) */

#define	ESPCTL_ENABLE		1	/* Enable ESP processing */
#define	ESPCTL_UDPENCAP_ENABLE	2	/* Enable ESP over UDP */
#define	ESPCTL_UDPENCAP_PORT	3	/* UDP port for encapsulation */
#define	ESPCTL_STATS		4	/* ESP Stats */
#define ESPCTL_MAXID		5

#define ESPCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "udpencap", CTLTYPE_INT }, \
	{ "udpencap_port", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
