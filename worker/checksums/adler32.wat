;; Adler-32 with WebAssembly SIMD, as zlib's and Chromium's vectorized versions compute it: 16 bytes at
;; a time, the byte sums and their weighted sums kept in four 32-bit lanes, reduced every chunk of at most
;; 5,552 bytes (NMAX, the most that cannot overflow). Compiled by scripts/build/adler32-wasm.ts into
;; adler32-wasm.ts, whose bytes a test checks against this file.
(module
  (memory (export "memory") 1)

  ;; Adler-32 of `len` bytes at `ptr`, continuing from `adler` (1 for a new sum).
  (func (export "adler32") (param $ptr i32) (param $len i32) (param $adler i32) (result i32)
    (local $a i64) (local $b i64)
    (local $end i32) (local $chunkEnd i32) (local $vectors i32)
    (local $sum v128) (local $prev v128) (local $weighted v128) (local $bytes v128)
    (local.set $a (i64.extend_i32_u (i32.and (local.get $adler) (i32.const 0xffff))))
    (local.set $b (i64.extend_i32_u (i32.shr_u (local.get $adler) (i32.const 16))))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (block $done
      (loop $chunks
        (br_if $done (i32.ge_u (local.get $ptr) (local.get $end)))
        ;; A chunk: whole vectors of 16 bytes, 5,552 bytes at most (347 vectors).
        (local.set $vectors
          (i32.shr_u
            (select (i32.sub (local.get $end) (local.get $ptr)) (i32.const 5552)
              (i32.lt_u (i32.sub (local.get $end) (local.get $ptr)) (i32.const 5552)))
            (i32.const 4)))
        (if (i32.gt_u (local.get $vectors) (i32.const 0))
          (then
            (local.set $chunkEnd (i32.add (local.get $ptr) (i32.shl (local.get $vectors) (i32.const 4))))
            (local.set $sum (v128.const i32x4 0 0 0 0))
            (local.set $prev (v128.const i32x4 0 0 0 0))
            (local.set $weighted (v128.const i32x4 0 0 0 0))
            (loop $vector
              (local.set $bytes (v128.load (local.get $ptr)))
              ;; Every earlier vector's bytes count once more in b for each later vector.
              (local.set $prev (i32x4.add (local.get $prev) (local.get $sum)))
              (local.set $sum
                (i32x4.add (local.get $sum)
                  (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $bytes)))))
              ;; Byte j of the vector counts 16 - j times in b.
              (local.set $weighted
                (i32x4.add (local.get $weighted)
                  (i32x4.add
                    (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_u (local.get $bytes))
                      (v128.const i16x8 16 15 14 13 12 11 10 9))
                    (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_u (local.get $bytes))
                      (v128.const i16x8 8 7 6 5 4 3 2 1)))))
              (local.set $ptr (i32.add (local.get $ptr) (i32.const 16)))
              (br_if $vector (i32.lt_u (local.get $ptr) (local.get $chunkEnd))))
            ;; b gains 16 a for each vector, 16 times the earlier vectors' sums, and the weighted bytes.
            (local.set $b
              (i64.add (local.get $b)
                (i64.add
                  (i64.mul (local.get $a) (i64.extend_i32_u (i32.shl (local.get $vectors) (i32.const 4))))
                  (i64.add
                    (i64.shl (call $lanes (local.get $prev)) (i64.const 4))
                    (call $lanes (local.get $weighted))))))
            (local.set $a (i64.add (local.get $a) (call $lanes (local.get $sum))))
            (local.set $a (i64.rem_u (local.get $a) (i64.const 65521)))
            (local.set $b (i64.rem_u (local.get $b) (i64.const 65521)))))
        ;; Fewer than 16 bytes left: one at a time.
        (if (i32.lt_u (i32.sub (local.get $end) (local.get $ptr)) (i32.const 16))
          (then
            (block $tailDone
              (loop $tail
                (br_if $tailDone (i32.ge_u (local.get $ptr) (local.get $end)))
                (local.set $a (i64.add (local.get $a) (i64.load8_u (local.get $ptr))))
                (local.set $b (i64.add (local.get $b) (local.get $a)))
                (local.set $ptr (i32.add (local.get $ptr) (i32.const 1)))
                (br $tail)))
            (local.set $a (i64.rem_u (local.get $a) (i64.const 65521)))
            (local.set $b (i64.rem_u (local.get $b) (i64.const 65521)))))
        (br $chunks)))
    (i32.or (i32.shl (i32.wrap_i64 (local.get $b)) (i32.const 16)) (i32.wrap_i64 (local.get $a))))

  ;; The sum of the four lanes, as a 64-bit value.
  (func $lanes (param $v v128) (result i64)
    (i64.add
      (i64.add (i64.extend_i32_u (i32x4.extract_lane 0 (local.get $v)))
        (i64.extend_i32_u (i32x4.extract_lane 1 (local.get $v))))
      (i64.add (i64.extend_i32_u (i32x4.extract_lane 2 (local.get $v)))
        (i64.extend_i32_u (i32x4.extract_lane 3 (local.get $v)))))))
