//! XXH64, the 64-bit xxHash of Yann Collet, written here from its specification.
//!
//! The Bloom filter's on-disk bits depend on this function, so it must never change: a change
//! would make every existing filter answer "absent" for keys it holds. The tests pin it to the
//! reference implementation's outputs. We write it rather than take a crate so that no
//! dependency upgrade can change it under us (DESIGN.md §9).

const PRIME_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME_5: u64 = 0x27D4_EB2F_1656_67C5;

#[inline]
fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(PRIME_2))
        .rotate_left(31)
        .wrapping_mul(PRIME_1)
}

#[inline]
fn merge_round(acc: u64, lane_acc: u64) -> u64 {
    (acc ^ round(0, lane_acc))
        .wrapping_mul(PRIME_1)
        .wrapping_add(PRIME_4)
}

#[inline]
fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

#[inline]
fn read_u32(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    u64::from(u32::from_le_bytes(word))
}

/// The XXH64 hash of `input` with `seed`.
pub fn xxh64(input: &[u8], seed: u64) -> u64 {
    let mut rest = input;
    let mut acc = if input.len() >= 32 {
        let mut lanes = [
            seed.wrapping_add(PRIME_1).wrapping_add(PRIME_2),
            seed.wrapping_add(PRIME_2),
            seed,
            seed.wrapping_sub(PRIME_1),
        ];
        while rest.len() >= 32 {
            let (stripe, tail) = rest.split_at(32);
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane = round(*lane, read_u64(&stripe[i * 8..]));
            }
            rest = tail;
        }
        let mut acc = lanes[0]
            .rotate_left(1)
            .wrapping_add(lanes[1].rotate_left(7))
            .wrapping_add(lanes[2].rotate_left(12))
            .wrapping_add(lanes[3].rotate_left(18));
        for lane in lanes {
            acc = merge_round(acc, lane);
        }
        acc
    } else {
        seed.wrapping_add(PRIME_5)
    };
    acc = acc.wrapping_add(input.len() as u64);
    while rest.len() >= 8 {
        acc ^= round(0, read_u64(rest));
        acc = acc
            .rotate_left(27)
            .wrapping_mul(PRIME_1)
            .wrapping_add(PRIME_4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        acc ^= read_u32(rest).wrapping_mul(PRIME_1);
        acc = acc
            .rotate_left(23)
            .wrapping_mul(PRIME_2)
            .wrapping_add(PRIME_3);
        rest = &rest[4..];
    }
    for &byte in rest {
        acc ^= u64::from(byte).wrapping_mul(PRIME_5);
        acc = acc.rotate_left(11).wrapping_mul(PRIME_1);
    }
    acc ^= acc >> 33;
    acc = acc.wrapping_mul(PRIME_2);
    acc ^= acc >> 29;
    acc = acc.wrapping_mul(PRIME_3);
    acc ^ (acc >> 32)
}

#[cfg(test)]
mod tests {
    use super::xxh64;

    /// Outputs of the reference C implementation.
    #[test]
    fn matches_the_reference_implementation() {
        let hundred: Vec<u8> = (0..100u8).collect();
        assert_eq!(xxh64(b"", 0), 0xef46_db37_51d8_e999);
        assert_eq!(xxh64(&[42], 0), 0x0a9e_dece_beb0_3ae4);
        assert_eq!(xxh64(b"Hello, world!\0", 0), 0x7b06_c531_ea43_e89f);
        assert_eq!(xxh64(&hundred, 0), 0x6ac1_e580_3216_6597);
        assert_eq!(xxh64(b"", 0xae05_4331_1b70_2d91), 0x4b6a_04fc_df7a_4672);
        assert_eq!(
            xxh64(&hundred, 0xae05_4331_1b70_2d91),
            0x567e_355e_0682_e1f1
        );
        assert_eq!(
            xxh64(b"x", u64::MAX - 0x27D4_EB2F_1656_67C5),
            0xf953_d52c_12a9_f5fb
        );
    }
}
