/* Source: netzbasis/openbsd-src@72ff345029cd271fe7ea8090aff7a89d1d32a7af:sys/nfs/nfs.h (OpenBSD 6.2) */

#define	NFS_NFSSTATS	1	/* struct: struct nfsstats */
#define	NFS_NIOTHREADS	2	/* number of i/o threads */
#define	NFS_MAXID	3

#define FS_NFS_NAMES { \
			{ 0, 0 }, \
			{ "nfsstats", CTLTYPE_STRUCT }, \
			{ "iothreads", CTLTYPE_INT } \
}
