"""Blind sets of learner answers (each set's README says how it was written).

``CONTRACT``: answers whose writer's label the exercise's stated contract (its stub's
docstring) overrules, with the reason — labelled wrong but allowed, or labelled correct but
outside the contract; the tests expect the checker to follow the contract, and the feedback
benchmark counts them apart, neither accepted-wrong nor rejected-right.
"""

CONTRACT = {
    "multi_head_forward_sdpa": "a query that sees no key may get any finite result (SDPA's "
                               "zeros)",
    "apply_rotary_float32_angles": "angles in float32 for a float64 x (the course's own "
                                   "solution computes them so)",
    "e_rot_float32_angles": "angles in float32 for a float64 x",
    "next_token_probs_exactly_k": "a tie with the k-th largest may go either way (the stub)",
    "f_ntp_scatter": "a tie with the k-th largest may go either way (the stub)",
    "d_embed_bias_added_after": "bias is a (d_model,) tensor (the stub), never None",
    "f_emb_bias_view": "bias is a (d_model,) tensor (the stub), never None",
    "g_MHA_sdpa_float_mask": "the module's mask is bool, True = may attend (the stub)",
    "i_softmax_pairwise_differences": "labelled correct; gives NaN for a score of -inf, "
                                      "which gets weight 0 (the stub, since set I)",
    "oa_sm_logsumexp": "exp(x − logsumexp(x)) in float16 is off by at most 6e-3, within "
                       "float16's tolerance (1e-2) for every softmax of the course",
    "oa_wa_renormalised": "the weights sum to one (the stub): dividing by their sum again "
                          "changes nothing, and their gradient only by a constant per row, "
                          "which the softmax before them cancels",
    "oc_os_key_by_key": "NaN only for a score of -inf; the course masks with the most "
                        "negative finite value (masks.masked_score), never -inf",
    "rc_os_key_by_key": "as oc_os_key_by_key: NaN only for a score of -inf",
    "rf_rb_long_cast": "as pf_rb_long_targets: the stub leaves the dtypes open, and int64 ids "
                       "are what an embedding and F.cross_entropy take",
    "sc_rb_int64_targets": "as pf_rb_long_targets: the stub leaves the targets' dtype open",
    "tc_rb_int64_targets": "as pf_rb_long_targets: the stub leaves the targets' dtype open",
    "attention_logsumexp": "exp(s - logsumexp(s)) is right: it loses only float32's rounding "
                           "of scores near -20,000 (set S's sa_sdp_where, labelled correct, "
                           "is the same formula)",
    "qa_wa_renormalised": "as oa_wa_renormalised: the weights sum to one (the stub), and "
                          "their gradient changes only by a constant per row",
    "qb_mhf_tilde_mask": "multi_head_forward's mask is bool, True = may attend (the stub): "
                         "`~` on it is a logical not; a 0/1 integer mask is not promised",
    "ph_rot_float32_angles": "angles in float32 for a float64 x (as e_rot_float32_angles): "
                             "off only at positions in the tens of thousands",
    "pf_rb_long_targets": "the stub leaves the targets' dtype open, and int64 is what "
                          "F.cross_entropy asks of them (int32 targets raise there)",
}
