"""Blind set J, notebook 08's capstone loop: get_batch, train_step and generate."""

import torch
import torch.nn.functional as F

# The notebook's state, as a learner who used it would read it.
block_size = 64
batch_size = 16
vocab_size = 65
train_ids = torch.arange(2000) * 7 % 65  # stands in for the notebook's training text


# --------------------------------------------------------------------------- get_batch


def j_gb_randint_inclusive(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def j_gb_randint_cautious(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context - 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def j_gb_no_shift(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, x.clone()


def j_gb_roll(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.roll(x, shifts=-1, dims=1)
    return x, y


def j_gb_global_block_size(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    x = torch.stack([ids[i:i + context] for i in starts])
    y = torch.stack([ids[i + 1:i + context + 1] for i in starts])
    return x, y


def j_gb_global_train_ids(ids, context, batch_size, generator=None):
    ix = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([train_ids[i:i + context] for i in ix])
    y = torch.stack([train_ids[i + 1:i + context + 1] for i in ix])
    return x, y


def j_gb_no_generator(ids, context, batch_size, generator=None):
    ix = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[i:i + context] for i in ix])
    y = torch.stack([ids[i + 1:i + context + 1] for i in ix])
    return x, y


def j_gb_two_draws(ids, context, batch_size, generator=None):
    n = len(ids) - context
    x = torch.stack([ids[i:i + context]
                     for i in torch.randint(n, (batch_size,), generator=generator)])
    y = torch.stack([ids[i + 1:i + context + 1]
                     for i in torch.randint(n, (batch_size,), generator=generator)])
    return x, y


def j_gb_float_buffer(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.zeros(batch_size, context)
    y = torch.zeros(batch_size, context)
    for b, s in enumerate(starts.tolist()):
        x[b] = ids[s:s + context]
        y[b] = ids[s + 1:s + context + 1]
    return x, y


def j_gb_stack_dim1(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts], dim=1)
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts], dim=1)
    return x, y


def j_gb_broadcast(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    index = torch.arange(context).expand(batch_size, context) + starts
    return ids[index], ids[index + 1]


def j_gb_alias(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = ids[starts[:, None] + torch.arange(context)]
    y = x  # then shift it left and put the next token at the end
    y[:, :-1] = x[:, 1:].clone()
    y[:, -1] = ids[starts + context]
    return x, y


def j_gb_y_short(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context] for s in starts])
    return x, y


def j_gb_lists(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = [ids[s:s + context] for s in starts]
    y = [ids[s + 1:s + context + 1] for s in starts]
    return x, y


def j_gb_wide_windows(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    chunk = ids[starts.unsqueeze(-1) + torch.arange(context + 1)]  # (batch, context + 1)
    return chunk[:, :-1], chunk[:, 1:]


def j_gb_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    windows = ids.unfold(0, context, 1)  # (len - context + 1, context), a view
    return windows[starts], windows[starts + 1]


def j_gb_gather(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    index = starts.view(-1, 1) + torch.arange(context).view(1, -1)
    rows = ids.unsqueeze(0).expand(batch_size, -1)
    return rows.gather(1, index), rows.gather(1, index + 1)


def j_gb_python_loop(ids, context, batch_size, generator=None):
    xs, ys = [], []
    for start in torch.randint(len(ids) - context, (batch_size,), generator=generator).tolist():
        window = ids[start:start + context + 1].clone()
        xs.append(window[:-1])
        ys.append(window[1:])
    return torch.stack(xs), torch.stack(ys)


# -------------------------------------------------------------------------- train_step


def j_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_zero_after_backward(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def j_ts_step_before_backward(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    optimizer.step()
    loss.backward()
    return loss.item()


def j_ts_zero_grad_last(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()  # tidy up for the next step
    return loss.item()


def j_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.detach()


def j_ts_double_shift(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)[:, :-1]
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_vocab_axis(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_sum(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_softmax_first(model, optimizer, x, y):
    optimizer.zero_grad()
    probs = model(x).softmax(dim=-1)
    loss = F.cross_entropy(probs.view(-1, probs.size(-1)), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_global_shape(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x).view(batch_size * block_size, vocab_size)
    loss = F.cross_entropy(logits, y.view(batch_size * block_size))
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_permute_then_flatten(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    vocab = logits.size(-1)
    loss = F.cross_entropy(logits.permute(0, 2, 1).reshape(-1, vocab), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_loss_after_step(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    with torch.no_grad():  # report the loss of the updated model
        new_logits = model(x)
        return F.cross_entropy(new_logits.flatten(0, 1), y.flatten()).item()


def j_ts_detached_logits(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x).detach()
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_manual_update(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    lr = optimizer.param_groups[0]["lr"]
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    return loss.item()


def j_ts_last_position(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, -1], y[:, -1])
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_classes_in_dim1(model, optimizer, x, y):
    model.zero_grad()
    loss = F.cross_entropy(model(x).transpose(1, 2), y)  # (batch, vocab, seq) vs (batch, seq)
    loss.backward()
    optimizer.step()
    return float(loss)


def j_ts_gather(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=False)
    log_probs = torch.log_softmax(model(x), dim=-1)
    loss = -log_probs.gather(-1, y.unsqueeze(-1)).mean()
    loss.backward()
    optimizer.step()
    return loss.item()


def j_ts_nll_grad_none(model, optimizer, x, y):
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    logits = model(x)
    loss = F.nll_loss(F.log_softmax(logits.flatten(end_dim=1), dim=1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss.detach().cpu().item()


# ---------------------------------------------------------------------------- generate


def j_gen_no_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids)
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_crop_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    from attncourse.gpt import next_token_probs
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -(context - 1):])  # leave room for the new token
        probs = next_token_probs(logits[:, -1, :], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_crop_front(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, :model.config.context])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_global_block_size(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                            generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        idx_cond = ids[:, -block_size:]
        logits = model(idx_cond)[:, -1, :]
        probs = next_token_probs(logits, temperature, top_k)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        ids = torch.cat((ids, idx_next), dim=1)
    return ids


def j_gen_greedy(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, probs.argmax(dim=-1, keepdim=True)], dim=1)
    return ids


def j_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, 0], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_no_generator(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                       generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def j_gen_top_k_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_view_one(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator).item()
        ids = torch.cat([ids, torch.tensor([[next_id]])], dim=1)
    return ids


def j_gen_prompt_window(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    from attncourse.gpt import next_token_probs
    window = min(ids.size(1), model.config.context)
    for _ in range(max_new_tokens):
        logits = model(ids[:, -window:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_index_past_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        last = logits[:, ids.size(1) - 1]  # the position of the last token
        probs = next_token_probs(last, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def j_gen_rolling_window(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    from attncourse.gpt import next_token_probs
    context = model.config.context
    window = ids[:, -context:]
    new = []
    for _ in range(max_new_tokens):
        probs = next_token_probs(model(window)[:, -1], temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator)
        new.append(next_id)
        if window.size(1) < context:
            window = torch.cat([window, next_id], dim=1)
        else:  # full: slide it along in place
            window[:, :-1] = window[:, 1:].clone()
            window[:, -1:] = next_id
    return torch.cat([ids] + new, dim=1)


def j_gen_replacement(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        next_id = torch.multinomial(probs, 1, replacement=True, generator=generator)
        ids = torch.cat([ids, next_id], dim=1)
    return ids


def j_gen_categorical(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                      generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        next_id = torch.distributions.Categorical(probs=probs).sample()  # (batch,)
        ids = torch.cat([ids, next_id.unsqueeze(1)], dim=1)
    return ids


def j_gen_new_only(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    out = []
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator)
        out.append(next_id)
        ids = torch.cat([ids, next_id], dim=1)
    return torch.cat(out, dim=1)


def j_gen_buffer_negative_start(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                                generator=None):
    from attncourse.gpt import next_token_probs
    b, n = ids.shape
    context = model.config.context
    out = torch.zeros(b, n + max_new_tokens, dtype=ids.dtype)
    out[:, :n] = ids
    for t in range(n, n + max_new_tokens):
        logits = model(out[:, t - context:t])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        out[:, t:t + 1] = torch.multinomial(probs, 1, generator=generator)
    return out


def j_gen_buffer(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    b, n = ids.shape
    context = model.config.context
    out = ids.new_empty(b, n + max_new_tokens)
    out[:, :n] = ids
    with torch.no_grad():
        for t in range(n, n + max_new_tokens):
            logits = model(out[:, max(0, t - context):t])
            probs = next_token_probs(logits[:, -1], temperature, top_k)
            out[:, t] = torch.multinomial(probs, 1, generator=generator)[:, 0]
    return out


def j_gen_recursive(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    if max_new_tokens == 0:
        return ids
    seen = ids.narrow(1, max(0, ids.size(1) - model.config.context),
                      min(ids.size(1), model.config.context))
    probs = next_token_probs(model(seen)[:, -1], temperature=temperature, top_k=top_k)
    following = torch.hstack([ids, torch.multinomial(probs, 1, generator=generator)])
    return j_gen_recursive(model, following, max_new_tokens - 1, temperature, top_k, generator)


def j_gen_columns(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    columns = list(ids.unbind(dim=1))  # one (batch,) tensor per position
    for _ in range(max_new_tokens):
        window = torch.stack(columns[-model.config.context:], dim=1)
        scores = model(window)[:, -1]
        columns.append(torch.multinomial(next_token_probs(scores, temperature, top_k), 1,
                                         generator=generator).squeeze(1))
    return torch.stack(columns, dim=1)


# ----------------------------------------------------------------------------- answers

_GB = "ids = torch.arange(40), context 6, batch 5; generator and global RNG both seeded 0"
_TS = ("GPT(GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=1, d_ff=16, "
       "positions='learned')), Adam(lr=1e-2), three steps on random (4, 6) batches x, y")
_GEN = ("that GPT with every 2-D weight multiplied by 40, prompt (2, 3), 8 new tokens, "
        "temperature 1.0; generator and global RNG both seeded 0")

ANSWERS = [
    # get_batch
    dict(exercise="get_batch", fn=j_gb_randint_inclusive, correct=False, kind="off_by_one",
         slip="Draws starts up to len(ids) - context inclusive, so the last window has no target token left (and the draws differ).",
         differs_on="ids = torch.arange(7), context 6, batch 5 (y of a window starting at 1 is one short)"),
    dict(exercise="get_batch", fn=j_gb_randint_cautious, correct=False, kind="off_by_one",
         slip="Draws from len(ids) - context - 1, one place too few, so the starts differ from the prescribed draw.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_no_shift, correct=False, kind="off_by_one",
         slip="Returns the windows themselves as targets, unshifted.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_roll, correct=False, kind="off_by_one",
         slip="Shifts x with torch.roll, so the last target wraps round to the window's first token instead of the token after it.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_global_block_size, correct=False, kind="global",
         slip="Bounds the draw with the notebook's block_size = 64 instead of context.",
         differs_on="ids = torch.arange(100), context 6, batch 5 (and any ids shorter than 64, where it raises)"),
    dict(exercise="get_batch", fn=j_gb_global_train_ids, correct=False, kind="global",
         slip="Slices the notebook's train_ids instead of the ids it was given.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_no_generator, correct=False, kind="argument_ignored",
         slip="Never passes the generator to torch.randint, so the starts come from the global RNG; agrees only when both happen to be seeded alike.",
         differs_on="ids = torch.arange(40), context 6, batch 5; global RNG seeded 0, generator seeded 1"),
    dict(exercise="get_batch", fn=j_gb_two_draws, correct=False, kind="step",
         slip="Draws starts twice, once for x and once for y, so the targets come from other windows.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_float_buffer, correct=False, kind="dtype",
         slip="Fills torch.zeros buffers, so x and y come back float32 instead of the ids' integer dtype.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_stack_dim1, correct=False, kind="axis",
         slip="Stacks the windows along dim 1, giving (context, batch_size).",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_broadcast, correct=False, kind="broadcast",
         slip="Adds the (batch,) starts to a (batch, context) grid, which broadcasts them along the positions: raises unless batch_size == context, and is wrong then.",
         differs_on="ids = torch.arange(40), context 5, batch 5 (raises for batch 4)"),
    dict(exercise="get_batch", fn=j_gb_alias, correct=False, kind="in_place",
         slip="y = x aliases the windows, so shifting y in place shifts x too.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_y_short, correct=False, kind="shape",
         slip="Slices the targets as ids[s+1 : s+context], one token short.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_lists, correct=False, kind="type",
         slip="Returns Python lists of windows instead of stacked (batch_size, context) tensors.",
         differs_on=_GB),
    dict(exercise="get_batch", fn=j_gb_wide_windows, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="get_batch", fn=j_gb_unfold, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="get_batch", fn=j_gb_gather, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="get_batch", fn=j_gb_python_loop, correct=True, kind="", slip="",
         differs_on=""),
    # train_step
    dict(exercise="train_step", fn=j_ts_no_zero_grad, correct=False, kind="step",
         slip="Never clears the gradients, so from the second step on they accumulate.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_zero_after_backward, correct=False, kind="step",
         slip="Clears the gradients between backward and step, so the optimizer steps with none and nothing moves.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_step_before_backward, correct=False, kind="step",
         slip="Calls optimizer.step() before loss.backward(), so each step uses no gradients and the weights never change.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_zero_grad_last, correct=False, kind="step",
         slip="Clears the gradients after the step instead of before, so gradients left on the model before the first call leak into it.",
         differs_on=_TS + ", after one loss.backward() on the model without a step"),
    dict(exercise="train_step", fn=j_ts_returns_tensor, correct=False, kind="type",
         slip="Returns the loss as a 0-d tensor, not a Python float.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_double_shift, correct=False, kind="off_by_one",
         slip="Shifts again as next_token_loss does, though y is already the next tokens.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_vocab_axis, correct=False, kind="axis",
         slip="Passes (batch, seq, vocab) logits straight to F.cross_entropy, which wants the classes in dim 1: raises.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_sum, correct=False, kind="scale",
         slip="Sums the cross-entropy over the positions instead of averaging; Adam hides most of it, but the returned loss is batch*seq times too large.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_softmax_first, correct=False, kind="numerics",
         slip="Softmaxes the logits before F.cross_entropy, which applies its own log-softmax.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_global_shape, correct=False, kind="global",
         slip="Reshapes with the notebook's batch_size = 16, block_size = 64 and vocab_size = 65.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_permute_then_flatten, correct=False, kind="axis",
         slip="Moves the vocabulary to dim 1 and then flattens as if it were last, scrambling which logits go with which target.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_loss_after_step, correct=False, kind="step",
         slip="Returns the loss of the updated model, computed again after the step, not the loss it trained on.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_detached_logits, correct=False, kind="other",
         slip="Detaches the logits, so the loss has no graph and backward raises.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_manual_update, correct=False, kind="step",
         slip="Updates the weights by hand with plain gradient descent at the optimizer's lr instead of calling optimizer.step() (Adam).",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_last_position, correct=False, kind="shape",
         slip="Scores only the last position of each window instead of every position.",
         differs_on=_TS),
    dict(exercise="train_step", fn=j_ts_classes_in_dim1, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="train_step", fn=j_ts_gather, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="train_step", fn=j_ts_nll_grad_none, correct=True, kind="", slip="",
         differs_on=""),
    # generate
    dict(exercise="generate", fn=j_gen_no_crop, correct=False, kind="cropping",
         slip="Feeds the whole text to the model, which raises once it outgrows the learned positions.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_crop_one_short, correct=False, kind="off_by_one",
         slip="Crops to the last context - 1 tokens, so the model sees one token fewer than it can once the text is longer than that.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_crop_front, correct=False, kind="cropping",
         slip="Keeps the first context tokens instead of the last, so once the text is full the model keeps reading the same start.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_global_block_size, correct=False, kind="global",
         slip="Crops with the notebook's block_size = 64 instead of model.config.context.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_greedy, correct=False, kind="other",
         slip="Takes the argmax of the probabilities (greedy) instead of sampling with torch.multinomial.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_first_position, correct=False, kind="off_by_one",
         slip="Samples from the logits at position 0 instead of the last position.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_no_generator, correct=False, kind="argument_ignored",
         slip="Never passes the generator to torch.multinomial, so it samples from the global RNG; agrees only when both happen to be seeded alike.",
         differs_on="as for the others, but the global RNG seeded 0 and the generator seeded 1"),
    dict(exercise="generate", fn=j_gen_top_k_dropped, correct=False, kind="argument_ignored",
         slip="Never passes top_k on to next_token_probs.",
         differs_on=_GEN.replace("temperature 1.0", "temperature 1.0, top_k 2")),
    dict(exercise="generate", fn=j_gen_view_one, correct=False, kind="shape",
         slip="Turns the drawn token into a Python number with .item(), which only works for a batch of one.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_prompt_window, correct=False, kind="cropping",
         slip="Crops to the prompt's length instead of the model's context, so after a short prompt the model reads too little.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_index_past_crop, correct=False, kind="off_by_one",
         slip="Picks the logits at index len(text) - 1, which is past the cropped window once the text outgrows the context: raises.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_rolling_window, correct=False, kind="in_place",
         slip="Slides a window that is a view of the prompt in place, so a prompt at least context long is overwritten (and returned overwritten).",
         differs_on=_GEN.replace("prompt (2, 3)", "prompt (2, 7)")),
    dict(exercise="generate", fn=j_gen_categorical, correct=False, kind="other",
         slip="Samples with torch.distributions.Categorical, which cannot take the generator: it draws from the global RNG (agrees only when both happen to be seeded alike).",
         differs_on="as for the others, but the global RNG seeded 0 and the generator seeded 1"),
    dict(exercise="generate", fn=j_gen_new_only, correct=False, kind="shape",
         slip="Returns only the new tokens, (batch, max_new_tokens), without the prompt.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_buffer_negative_start, correct=False, kind="off_by_one",
         slip="Slices a preallocated buffer from t - context, which is negative while the text is shorter than the context and wraps to an empty or wrong window.",
         differs_on=_GEN),
    dict(exercise="generate", fn=j_gen_buffer, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="generate", fn=j_gen_recursive, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="generate", fn=j_gen_columns, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="generate", fn=j_gen_replacement, correct=True, kind="", slip="",
         differs_on=""),
]
