//! Lines from a peer, each bounded before it is held: the buffer grows only with bytes that have
//! arrived, never past the bound, so a peer cannot make the agent allocate more than one line's
//! bound per connection, whatever it sends or claims.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

#[derive(Debug)]
pub(crate) enum LineError {
    /// The line grew past the bound before its `\n`.
    TooLong,
    /// The peer closed the connection part way through a line, or it failed.
    Closed,
}

/// The next line, without its `\n` (nor a `\r` before it); None when the peer closed the
/// connection between lines. Not cancel safe: a line read part way is lost (the caller closes
/// the connection then).
pub(crate) async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Vec<u8>>, LineError> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await.map_err(|_| LineError::Closed)?;
        if available.is_empty() {
            return if line.is_empty() {
                Ok(None)
            } else {
                Err(LineError::Closed)
            };
        }
        let (take, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (available.len(), false),
        };
        if line.len() + take > limit {
            return Err(LineError::TooLong);
        }
        grow(&mut line, take, limit);
        line.extend_from_slice(&available[..take]);
        reader.consume(take + usize::from(complete));
        if complete {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(line));
        }
    }
}

/// Makes room for `extra` more bytes: doubling, but never past `limit`.
fn grow(line: &mut Vec<u8>, extra: usize, limit: usize) {
    let needed = line.len() + extra;
    if needed > line.capacity() {
        let target = (line.capacity() * 2).clamp(needed, limit.max(needed));
        line.reserve_exact(target - line.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_up_to_the_bound_and_not_past_it() {
        let input: &[u8] = b"{\"a\":1}\r\nabcdef\n0123456789ABC\nlast";
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        assert_eq!(
            next_line(&mut reader, 10).await.unwrap().unwrap(),
            b"{\"a\":1}"
        );
        let line = next_line(&mut reader, 10).await.unwrap().unwrap();
        assert_eq!(line, b"abcdef");
        assert!(line.capacity() <= 10);
        assert!(matches!(
            next_line(&mut reader, 10).await,
            Err(LineError::TooLong)
        ));
        let mut reader = tokio::io::BufReader::new(&b"last"[..]);
        assert!(matches!(
            next_line(&mut reader, 10).await,
            Err(LineError::Closed)
        ));
        let mut reader = tokio::io::BufReader::new(&b""[..]);
        assert!(next_line(&mut reader, 10).await.unwrap().is_none());
    }
}
