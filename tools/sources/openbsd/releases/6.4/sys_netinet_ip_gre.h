/* Source: netzbasis/openbsd-src@dc525184cbba8f0bb3f0a2d572fa2b0f3f1fdfe5:sys/netinet/ip_gre.h (OpenBSD 6.4) */

#define GRECTL_ALLOW    1		/* accept incoming GRE packets */
#define GRECTL_WCCP     2		/* accept WCCPv1-style GRE packets */
#define GRECTL_MAXID    3

#define GRECTL_NAMES { \
        { 0, 0 }, \
        { "allow", CTLTYPE_INT }, \
        { "wccp", CTLTYPE_INT }, \
}

#define MOBILEIPCTL_ALLOW    1		/* accept incoming MobileIP packets */
#define MOBILEIPCTL_MAXID    2

#define MOBILEIPCTL_NAMES { \
        { 0, 0 }, \
        { "allow", CTLTYPE_INT }, \
}
