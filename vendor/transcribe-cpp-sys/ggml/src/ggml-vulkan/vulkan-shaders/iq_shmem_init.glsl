void init_iq_shmem(uvec3 wgsize) {
}
