/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/sys/mount.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define	VFS_GENERIC	0	/* generic filesystem information */
/*
 * Third level identifiers for VFS_GENERIC are given below; third
 * level identifiers for specific filesystems are given in their
 * mount specific header files.
 */
#define VFS_MAXTYPENUM	1	/* int: highest defined filesystem type */
#define VFS_CONF	2	/* struct: vfsconf for filesystem given
				   as next argument */
#define VFS_BCACHESTAT	3	/* struct: buffer cache statistics given 
				   as next argument */
#define	CTL_VFSGENCTL_NAMES { \
	{ 0, 0 }, \
	{ "maxtypenum", CTLTYPE_INT }, \
	{ "conf", CTLTYPE_NODE }, \
	{ "bcachestat", CTLTYPE_STRUCT } \
}
